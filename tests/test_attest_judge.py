"""The judge in an attestation: a run whose claim of done the judge (the real Anthropic SDK against the fake model
API) graded names its model, its verdict and the digest of the rubric it was graded against, the one the loop
built; a run without a judge says "not asked" (tests/test_attest.py)."""
from __future__ import annotations

import hashlib
import json

from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.shift.launcher import run_foreground
from nightshift.supervisor.verify.judge.call import gather_inputs, rubric_for
from tests.fake_anthropic import FakeAnthropic
from tests.fixtures_attest import read_envelope, statement_of
from tests.fixtures_core import workspace  # noqa: F401
from tests.test_judge_loop import FIX, JUDGE, findings


def test_the_judge_that_graded_the_claim_is_named_with_its_rubric_digest(workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    ws = workspace.configure({"s1t1": FIX}, extra=JUDGE)
    config = load_config(ws.path)
    rubric = rubric_for(config.judge, gather_inputs(ws.path, config.judge, None, None, "", config.goal))
    with FakeAnthropic([findings(len(rubric), False)], side_requests="script") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        run = ws.create_run()
        assert run_foreground(run, say=lambda _: None) == 0
    envelope = read_envelope(run.root / "attestations" / "verdict-1.dsse.json")
    judge = statement_of(envelope)["predicate"]["judge"]
    assert judge["asked"] and judge["verdict"] == "pass" and judge["model"] == "claude-sonnet-4-6"
    assert judge["rubric_sha256"] == hashlib.sha256(json.dumps(rubric).encode()).hexdigest()
    assert judge["criteria"] == len(rubric)
    assert "sk-ant-test" not in json.dumps(statement_of(envelope))  # no secret in what is published
