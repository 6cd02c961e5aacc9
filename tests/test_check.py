"""`nightshift check`, the preflight: each mistake a user can make at 6 pm is found in its own test, with its fix;
the demo workspace passes; `nightshift run` records the preflight as the run's starting point (or that it was
skipped). Real processes, real git, the real Claude Code CLI against the fake model API for the agent turn."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.cli.demo import build_workspace
from tests.fixtures_core import kill_supervisor, nightshift, require_tool
from tests.fixtures_references import CANDIDATE_MAKER, make_reference_folder

GOAL = "agree with CLASS to 0.1%"


def git_commit(ws: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup"], cwd=ws, check=True)


def edit_toml(ws: Path, old: str, new: str) -> None:
    toml = ws / "nightshift.toml"
    text = toml.read_text()
    assert old in text, old
    toml.write_text(text.replace(old, new, 1))


@pytest.fixture
def ready(tmp_path):
    """A workspace made by `nightshift init` from a reference folder, whose oracle command writes candidates."""
    require_tool("git")
    ws = tmp_path / "ws"
    ws.mkdir()
    make_reference_folder(ws)
    make_reference_folder(ws, "data")  # what the stand-in solver "computed" (the references are hidden from it)
    (ws / "make_out.py").write_text(CANDIDATE_MAKER)
    out = nightshift("init", str(ws), "--goal", GOAL, "--reference-dir", "reference", "--agent", "demo")
    assert out.returncode == 0, out.stderr
    edit_toml(ws, '\ncommand = ""', f'\ncommand = "{sys.executable} make_out.py 0.005"')
    git_commit(ws)
    return ws


def check(ws: Path, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return nightshift("check", str(ws), *args, env=env, timeout=timeout)


def problems(out: subprocess.CompletedProcess) -> list[str]:
    return [line for line in out.stdout.splitlines() if line.startswith("FAIL")]


def only_problem(out: subprocess.CompletedProcess, *needles: str) -> str:
    assert out.returncode == 1, out.stdout + out.stderr
    [line] = problems(out)
    for needle in needles:
        assert needle in line, line
    return line


def test_a_workspace_made_by_init_passes_and_shows_todays_gap(ready):
    out = check(ready)
    assert out.returncode == 0, out.stdout
    # the point furthest outside its tolerance (atol = rtol x RMS(TT), derived at init), quoted in numbers
    assert re.search(r"note  gap today    cl_class: [0-9.]+ x the tolerance \(worst TT: rel err 5\.00e-03 vs rtol "
                     r"0\.001 at l=100: \|cand - ref\| = [0-9.e+-]+, \|ref\| = [0-9.e+-]+, atol [0-9.e+-]+\)",
                     out.stdout), out.stdout
    assert "ok    calibration  bao, cl_class, growth, pk_camb, spectra-lensing" in out.stdout
    assert out.stdout.strip().endswith("ready: nothing found that would stop a run")


def test_the_demo_workspace_passes(tmp_path):
    require_tool("git")
    ws = build_workspace(tmp_path / "demo")
    out = check(ws)
    assert out.returncode == 0, out.stdout
    assert "tests        0 pass now" in out.stdout and "per-test results readable (nightshift's pytest plugin)" in out.stdout


def test_a_wrong_oracle_command(ready):
    edit_toml(ready, f"{sys.executable} make_out.py", "pyhton make_out.py")
    only_problem(check(ready), "oracle", "`pyhton make_out.py 0.005` cannot run", "fix [oracle] command")


def test_an_oracle_command_that_hangs_is_stopped_at_its_timeout(ready):
    edit_toml(ready, f"{sys.executable} make_out.py 0.005", "sleep 600")
    edit_toml(ready, 'timeout = "30m"\n# tolerance', 'timeout = "2s"\n# tolerance')  # the oracle's, not [verify]
    only_problem(check(ready), "did not finish within its timeout (2 s) and was stopped")


def test_a_candidate_the_command_does_not_write(ready):
    edit_toml(ready, 'candidate = "out/bao.csv"', 'candidate = "out/bao_table.csv"')
    only_problem(check(ready), "bao: out/bao_table.csv is not written by", "although it exits 0")


def test_a_comparison_that_cannot_fail(ready):
    text = (ready / "nightshift.toml").read_text()
    at = text.index('name = "growth"')
    (ready / "nightshift.toml").write_text(text[:at] + text[at:].replace("rtol = 0.001", "rtol = 1.5", 1))
    out = check(ready)
    assert out.returncode == 1
    assert problems(out) and all("growth" in p and "cannot fail" in p for p in problems(out)), out.stdout


def test_tolerance_both_with_no_atol_is_named_as_a_comparison_nothing_can_pass(ready):
    # tolerance = "both" takes the smaller of rtol*|ref| and atol: with atol = 0 any difference fails in a verdict,
    # so the preflight must say so rather than calibrate against rtol alone.
    text = (ready / "nightshift.toml").read_text()
    at = text.index('name = "growth"')
    block = text[at:].replace("rtol = 0.001", 'rtol = 0.001\ntolerance = "both"', 1)
    block = re.sub(r"\nper_column\.[^\n]*", "", block, count=2)  # growth's D and f: the atol init derived goes
    (ready / "nightshift.toml").write_text(text[:at] + block)
    out = check(ready)
    assert out.returncode == 1
    assert any("growth" in p and "tolerance is zero at every point" in p for p in problems(out)), out.stdout


def test_an_empty_range_measures_nothing(ready):
    edit_toml(ready, 'columns = ["DM", "DH"]', 'columns = ["DM", "DH"]\nrange = [50, 60]')
    out = check(ready)
    assert any("calibration" in p and "bao: measures nothing" in p for p in problems(out)), out.stdout


def test_a_test_runner_that_is_not_installed(ready):
    edit_toml(ready, 'test_command = ""', 'test_command = "nosuchrunner -q tests"')
    only_problem(check(ready), "tests", "`nosuchrunner -q tests` cannot run", "install it")


def test_a_reference_edited_after_init(ready):
    path = ready / "reference" / "bao.csv"
    path.write_text(path.read_text().replace("0.1,", "0.1000001,", 1))
    only_problem(check(ready), "reference/bao.csv was changed after `nightshift init`", "git checkout -- ")


def claude_workspace(ready: Path, config_dir: Path, trusted: bool = True) -> Path:
    edit_toml(ready, 'kind = "demo"', 'kind = "claude"')
    config_dir.mkdir(exist_ok=True)
    projects = {str(ready.resolve()): {"hasTrustDialogAccepted": True}} if trusted else {}
    (config_dir / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "projects": projects}))
    return ready


def no_credentials_env(config_dir: Path, **more: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")}
    return {**env, "CLAUDE_CONFIG_DIR": str(config_dir), **more}


def test_no_agent_cli_on_the_path(ready, tmp_path):
    ws = claude_workspace(ready, tmp_path / "cfg")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("bash", "sh", "git", "env", "sleep"):
        if shutil.which(tool):
            (bindir / tool).symlink_to(shutil.which(tool))
    env = {"PATH": str(bindir), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "ANTHROPIC_API_KEY": "x"}
    only_problem(check(ws, env=env), "claude not found on PATH", "npm install -g @anthropic-ai/claude-code")


def test_no_credentials_and_a_key_that_is_never_shown(ready, tmp_path):
    require_tool("claude")
    ws = claude_workspace(ready, tmp_path / "cfg")
    only_problem(check(ws, env=no_credentials_env(tmp_path / "cfg")), "credentials", "export one")
    out = check(ws, env=no_credentials_env(tmp_path / "cfg", ANTHROPIC_API_KEY="sk-ant-very-secret-1234"))
    assert out.returncode == 0, out.stdout
    assert "ANTHROPIC_API_KEY set (value not shown)" in out.stdout and "very-secret" not in out.stdout + out.stderr


def test_an_untrusted_workspace_is_named_with_the_fix(ready, tmp_path):
    require_tool("claude")
    ws = claude_workspace(ready, tmp_path / "cfg", trusted=False)
    only_problem(check(ws, env=no_credentials_env(tmp_path / "cfg", ANTHROPIC_API_KEY="k")),
                 "not trusted", "nightshift init --trust")


def test_one_real_agent_turn_starts_stops_and_is_heard(ready, tmp_path):
    require_tool("claude")
    from tests.fake_anthropic import FakeAnthropic, text

    ws = claude_workspace(ready, tmp_path / "cfg")
    with FakeAnthropic([text("ready")]) as fake:
        env = no_credentials_env(tmp_path / "cfg", **fake.env(), CLAUDE_CODE_MAX_RETRIES="0")
        out = check(ws, "--agent-turn", env=env)
        assert out.returncode == 0, out.stdout
        assert "agent turn   one real turn: started, answered 'ready', stopped and was heard" in out.stdout
        assert fake.message_requests(), "the real CLI talked to the fake model"
    with FakeAnthropic([]) as fake:
        env = no_credentials_env(tmp_path / "cfg", **fake.env(), CLAUDE_CODE_MAX_RETRIES="0")
        fake.stop()  # the API is gone: the turn fails, and the check says so
        out = check(ws, "--agent-turn", env=env)
        assert any("agent turn" in p and "one real turn failed" in p for p in problems(out)), out.stdout


def _gap_at_l100(ws: Path) -> float:
    """TT moved by 0.5% at l = 100 (CANDIDATE_MAKER), over its tolerance there: atol + rtol |TT|."""
    from nightshift.supervisor.config.schema import load_config
    from tests.fixtures_references import cl_rows

    comp = next(c for c in load_config(ws).oracle.compare if c.name == "cl_class")
    tt = cl_rows()[98, 1]  # l = 100
    return 0.005 * tt / (comp.per_column["TT"].atol + comp.rtol * tt)


def test_run_records_the_preflight_as_its_starting_point_and_no_check_says_so(ready):
    edit_toml(ready, 'kind = "tmux"', 'kind = "local"')
    edit_toml(ready, "max_shifts = 20", "max_shifts = 1")
    git_commit(ready)
    try:
        out = nightshift("run", str(ready))
        assert out.returncode == 0, out.stderr
        assert "ready: nothing found that would stop a run" in out.stdout
        run_id = out.stdout.split()[1]
        first = _events(ready, run_id)
        kinds = [e["type"] for e in first]
        # recorded before any shift: the baseline the accuracy history starts from
        assert kinds[0] == "run.created" and kinds.index("preflight.finished") < kinds.index("shift.started") \
            if "shift.started" in kinds else "preflight.finished" in kinds
        baseline = first[kinds.index("preflight.finished")]["data"]
        gap = _gap_at_l100(ready)  # 0.5% off at l = 100 against rtol 1e-3 and the atol init derived for TT
        assert baseline["passed"] and baseline["metrics"]["cl_class"] == pytest.approx(gap, rel=1e-6)
        assert baseline["metric"] == pytest.approx(gap, rel=1e-6)
        from nightshift.supervisor.run.state import load_state
        root = ready / ".nightshift" / "runs" / run_id
        assert load_state(root)[0]["baseline"]["metrics"]["cl_class"] == pytest.approx(gap, rel=1e-6)
        assert (root / "preflight" / "oracle" / "oracle.json").exists()
        from nightshift.supervisor.cli.oracle_verbs import history_series
        from nightshift.tui.oracle_report import history
        labels, series, _ = history_series(root)  # `nightshift plot`: the history begins before any shift
        assert labels[0] == "before" and series["cl_class"][0] == pytest.approx(0.005, rel=1e-6)
        assert history([], load_state(root)[0]["baseline"])["cl_class"] == [(0, pytest.approx(gap, rel=1e-6))]
        assert nightshift("stop", run_id).returncode in (0, 3)
        from tests.fixtures_core import wait_for
        wait_for(lambda: any(e["type"] == "run.finished" for e in _events(ready, run_id)), timeout=60,
                 what="the first run to end (one live run per workspace)")
        out = nightshift("run", str(ready), "--no-check")
        assert out.returncode == 0, out.stderr
        second = _events(ready, out.stdout.split()[1])
        skipped = next(e for e in second if e["type"] == "preflight.skipped")
        assert "--no-check" in skipped["data"]["reason"]
    finally:
        for run_dir in (ready / ".nightshift" / "runs").glob("*"):
            kill_supervisor(run_dir)


def test_a_failing_preflight_starts_no_run(ready):
    edit_toml(ready, f"{sys.executable} make_out.py", "pyhton make_out.py")
    out = nightshift("run", str(ready))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]  # one line, after the screen on stdout
    assert "--no-check" in out.stderr and "FAIL  oracle" in out.stdout
    assert not (ready / ".nightshift" / "runs").exists()


def _events(ws: Path, run_id: str) -> list[dict]:
    path = ws / ".nightshift" / "runs" / run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_reference_deleted_after_init_is_named_and_one_only_touched_is_not(ready):
    os.utime(ready / "reference" / "growth.npz", (1, 1))  # the same bytes, another time: the full hash decides
    (ready / "reference" / "bao.csv").unlink()
    out = check(ready)
    assert out.returncode == 1
    assert any("references" in p and "reference/bao.csv does not exist" in p for p in problems(out)), out.stdout
    assert not any("growth" in p for p in problems(out)), out.stdout


def test_checks_built_elsewhere_plug_into_the_hook_point(tmp_path):
    """The agent's boundary (#10) and the references out of reach (#14) add their lines through EXTRA_CHECKS."""
    require_tool("git")
    from nightshift.supervisor.cli.preflight import screen as pf

    ws = build_workspace(tmp_path / "demo")

    def boundary_lines(ctx):
        yield pf.Line(pf.NOTE, "boundary", f"seen with a valid config: {ctx.config.agent.kind}")

    def broken_lines(ctx):
        raise RuntimeError("boom")

    pf.register_check(boundary_lines)
    pf.register_check(boundary_lines)  # once however often
    try:
        found = pf.run_preflight(ws, out_dir=tmp_path / "out", extra=[broken_lines])
    finally:
        pf.EXTRA_CHECKS.remove(boundary_lines)
    rows = [(l.status, l.what, l.text) for l in found.lines]
    assert rows[-2] == ("note", "boundary", "seen with a valid config: demo")
    assert rows[-1] == ("FAIL", "broken_lines", "the check itself failed: RuntimeError: boom") and found.failed


def test_the_trust_fix_works_on_a_workspace_that_exists(ready, tmp_path):
    require_tool("claude")
    ws = claude_workspace(ready, tmp_path / "cfg", trusted=False)
    env = no_credentials_env(tmp_path / "cfg", ANTHROPIC_API_KEY="k")
    assert "not trusted" in check(ws, env=env).stdout
    out = nightshift("init", str(ws), "--trust", env=env, input="y\n")  # nothing rewritten, trust recorded
    assert out.returncode == 0 and "trust for" in out.stdout, out.stderr
    assert check(ws, env=env).returncode == 0


def test_the_preflight_runs_the_test_command_in_the_namespace_a_run_gives_it(ready):
    """What passes in `check` passes in the run: the test command runs the agent's code, so its preflight run is
    inside the same namespace (the host's /tmp is not shared, nightshift.toml is read-only)."""
    from tests.fixtures_namespace import need_namespace
    need_namespace()
    marker = f"preflight-test-{os.getpid()}"
    edit_toml(ready, 'test_command = ""', f'test_command = "echo x > /tmp/{marker}; echo y >> nightshift.toml; true"')
    git_commit(ready)
    before = (ready / "nightshift.toml").read_text()
    out = check(ready)
    assert not (Path("/tmp") / marker).exists(), out.stdout
    assert (ready / "nightshift.toml").read_text() == before
    assert any(line.startswith(("ok", "note")) and " tests " in line and "FAIL" not in line for line in out.stdout.splitlines()), out.stdout
