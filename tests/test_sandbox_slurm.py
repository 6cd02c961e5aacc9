"""Issue 37 on the localhost Slurm cluster: a run whose backend is Slurm gets munge's socket inside its turns, so the
agent's `sinfo`/`srun` inside an allocation authenticate; any other run's turn has it covered like every socket of
the machine (the Slurm client then cannot sign a request)."""
from __future__ import annotations

import subprocess

from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace
from tests.fixtures_slurm import slurm_cluster  # noqa: F401

SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\nmax_job_retries = 1\n'


def _turn_like(boundary, tmp):
    """The namespace of a turn of this boundary (the agent's own network setting, init defaults: on)."""
    from nightshift.supervisor.sandbox.mounts import Namespace, bwrap_argv

    return bwrap_argv(Namespace(workspace=boundary.workspace, tmp=tmp, hidden=list(boundary.hidden),
                                read_only=list(boundary.read_only), network=boundary.network,
                                deny_read=boundary.deny_read, sockets=boundary.sockets))


def test_a_slurm_run_reaches_munge_and_no_other_run_does(slurm_cluster, workspace, tmp_path):  # noqa: F811
    need_namespace()
    from nightshift.supervisor.config.schema import load_config
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.sandbox.hardening import MUNGE_SOCKET

    ws = workspace.configure({"s1t1": [["claim", "done", "x"]]}, backend="slurm", extra=SLURM)
    slurm = boundary_for(ws.path, load_config(ws.path))
    assert MUNGE_SOCKET in slurm.sockets
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    inside = subprocess.run(_turn_like(slurm, tmp) + ["sinfo", "-h", "-o", "%P"], capture_output=True, text=True,
                            timeout=60)
    assert inside.returncode == 0 and inside.stdout.strip(), inside.stderr
    ws.configure({"s1t1": [["claim", "done", "x"]]}, backend="local")
    local = boundary_for(ws.path, load_config(ws.path))
    assert MUNGE_SOCKET not in local.sockets
    covered = subprocess.run(_turn_like(local, tmp) + ["sinfo", "-h", "-o", "%P"], capture_output=True, text=True,
                             timeout=60)
    assert covered.returncode != 0 and "munge" in covered.stderr.lower(), (covered.stdout, covered.stderr)
