"""The Slurm lines of the preflight: `sbatch --test-only` with the run's own [slurm] resources. Without Slurm
the line says so; against the localhost cluster (tests/fixtures_slurm.py, marked slurm) a partition the cluster
does not have is refused in Slurm's own words and a valid request is accepted."""
from __future__ import annotations

import pytest

from tests.fixtures_slurm import slurm_cluster  # noqa: F401 - pytest fixture
from tests.test_check import check, edit_toml, ready  # noqa: F401 - pytest fixture
from tests.test_slurm_cli import without_slurm


def slurm_workspace(ws, partition: str = ""):
    edit_toml(ws, 'kind = "tmux"', 'kind = "slurm"')
    extra = f'\n[slurm]\nclient = "cli"\ntime = "5:00"\n' + (f'partition = "{partition}"\n' if partition else "")
    (ws / "nightshift.toml").write_text((ws / "nightshift.toml").read_text() + extra)
    return ws


def test_without_sbatch_the_slurm_line_names_the_fix(ready, tmp_path):
    ws = slurm_workspace(ready)
    out = check(ws, env=without_slurm(tmp_path))
    assert out.returncode == 1
    assert any(l.startswith("FAIL  slurm") and "Slurm commands not found (sbatch" in l and "--backend tmux" in l
               for l in out.stdout.splitlines()), out.stdout


@pytest.mark.slurm
def test_the_cluster_refuses_an_unknown_partition_and_accepts_a_valid_request(slurm_cluster, ready):
    ws = slurm_workspace(ready, partition="nosuch")
    out = check(ws)
    line = next(l for l in out.stdout.splitlines() if "slurm" in l[:20])
    assert line.startswith("FAIL") and "Invalid partition" in line and "[slurm]" in line
    edit_toml(ws, 'partition = "nosuch"', 'partition = "debug"')
    out = check(ws)
    line = next(l for l in out.stdout.splitlines() if "slurm" in l[:20])
    assert line.startswith("ok") and "accepts the job" in line, out.stdout


@pytest.mark.slurm
def test_check_job_reports_what_the_jobs_environment_lacks(slurm_cluster, ready):
    """`nightshift check --job`: the tiny job of `doctor --slurm`, its findings as preflight lines."""
    ws = slurm_workspace(ready, partition="debug")
    edit_toml(ws, '[slurm]\n', '[slurm]\nsetup = "export PATH=/usr/bin:/bin"\n')
    out = check(ws, "--job")
    claude = next(l for l in out.stdout.splitlines() if "in the job: claude" in l)
    assert claude.startswith("FAIL") and "not on the job's PATH" in claude, out.stdout
    assert any(l.startswith("ok") and "in the job: git" in l for l in out.stdout.splitlines()), out.stdout
    assert out.returncode == 1


def test_the_preflight_asks_about_the_real_script_and_never_writes_a_secret_into_it(ready, tmp_path):
    """The question to the cluster is rendered by the batch script's own code: a [slurm] extra line holding the
    value of a secret variable is refused there, before anything reaches Slurm (or a file)."""
    ws = slurm_workspace(ready)
    secret = "s3cr3t-value-of-the-token"
    edit_toml(ws, '[slurm]\n', f'[slurm]\nextra = ["--comment={secret}"]\n')
    out = check(ws, env={**without_slurm(tmp_path), "LAB_API_TOKEN": secret})
    line = next(l for l in out.stdout.splitlines() if l.startswith("FAIL  slurm"))
    assert "the batch script cannot be written" in line and "$LAB_API_TOKEN" in line and secret not in line
    assert out.returncode == 1
    assert not [p for p in ws.rglob("*") if p.is_file() and p.name != "nightshift.toml"
                and secret in p.read_text(errors="replace")]
