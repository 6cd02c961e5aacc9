"""`nightshift doctor --slurm` on the localhost cluster: a tiny job with the workspace's [slurm] settings reports
what its environment holds and lacks, each with its fix; the API key is named, never shown."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.fixtures_core import workspace  # noqa: F401 - pytest fixture
from tests.fixtures_slurm import slurm_cluster  # noqa: F401 - pytest fixture

pytestmark = pytest.mark.slurm
SECRET = "sk-ant-doctor-test-value-0123456789"
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")


def doctor(ws, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in CREDENTIALS and k != "CLAUDE_CONFIG_DIR"}
    return subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "doctor", "--slurm", str(ws.path)],
                          capture_output=True, text=True, timeout=300, env={**base, **env})


def line(out: str, what: str) -> str:
    """The job's row for ``what`` (the login node's own rows come first, above the marker)."""
    job_part = out.split("-- in a Slurm job --", 1)[1]
    return next(l for l in job_part.splitlines() if f"  {what} " in l)


def test_the_jobs_environment_has_what_nightshift_needs(slurm_cluster, workspace, tmp_path):
    ws = workspace.configure({}, backend="slurm", extra='[slurm]\nclient = "cli"\nenv = {NS_PROBE = "on"}\n')
    result = doctor(ws, ANTHROPIC_API_KEY=SECRET, CLAUDE_CONFIG_DIR=str(tmp_path / "no-login"))
    out = result.stdout
    assert "-- in a Slurm job --" in out and "submitted job" in out
    assert line(out, "claude").startswith("ok") and "/claude" in line(out, "claude")
    assert line(out, "git").startswith("ok") and line(out, "python: nightshift.supervisor").startswith("ok")
    assert line(out, "env: NS_PROBE").startswith("ok")
    assert "ANTHROPIC_API_KEY set in the job (value not shown)" in out
    assert SECRET not in out + result.stderr
    assert not any(p.name.startswith("doctor-") for p in (ws.path / ".nightshift").iterdir())  # cleaned up


def test_what_the_job_lacks_is_named_with_its_fix(slurm_cluster, workspace, tmp_path):
    # the setup line leaves the job a PATH without /usr/local/bin (where claude is), and no key is exported
    ws = workspace.configure({}, backend="slurm",
                             extra='[slurm]\nclient = "cli"\nsetup = "export PATH=/usr/bin:/bin"\n')
    result = doctor(ws, CLAUDE_CONFIG_DIR=str(tmp_path / "no-login"))
    out = result.stdout
    assert result.returncode == 1
    assert line(out, "claude").startswith("MISSING") and "not on the job's PATH" in line(out, "claude")
    assert line(out, "credentials").startswith("MISSING") and "export ANTHROPIC_API_KEY" in line(out, "credentials")
    assert "missing in the job: claude" in out


def test_a_module_that_does_not_load_is_reported_with_the_jobs_words(slurm_cluster, workspace):
    ws = workspace.configure({}, backend="slurm", extra='[slurm]\nclient = "cli"\nmodules = ["nosuch/1.0"]\n')
    out = doctor(ws).stdout
    assert line(out, "python in the job").startswith("MISSING")
    assert "'module load nosuch/1.0' failed in the job" in out
