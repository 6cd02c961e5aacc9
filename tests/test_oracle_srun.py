"""Issue 45: the oracle command runs where the science runs. On the localhost Slurm cluster an MPI program (C,
mpicc) whose oracle command starts its 2 ranks with `srun` ends VERIFIED DONE from `nightshift init` defaults plus
what `check` tells the user to set; before that, `check` names srun's own words and the setting (not "expected while
the solver is not written"), and srun missing on the node is named with its fix."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_core import AGENT, nightshift, require_tool
from tests.fixtures_slurm import slurm_cluster  # noqa: F401 - pytest fixture
from tests.test_check import edit_toml, git_commit

SOLVER = r"""#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size; MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
  FILE *f = rank == 0 ? fopen("out/result.txt", "w") : NULL;
  if (f) fprintf(f, "x y\n");
  for (int x = 0; x < 8; x++) {
    double mine = (rank + 1.0) * x * WEIGHT, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (f) fprintf(f, "%d %.17g\n", x, sum);
  }
  if (f) fclose(f);
  MPI_Finalize(); return 0; }
"""
# what 2 ranks compute with the right weight: sum over ranks of (rank + 1) * x * 0.5
REFERENCE = "x y\n" + "".join(f"{x} {1.5 * x!r}\n" for x in range(8))
ORACLE = "mkdir -p out && mpicc -O2 -o solver solver.c && srun --mpi=pmi2 -n 2 ./solver"
DONE = "import re, pathlib; p = pathlib.Path('CLAUDE.md'); p.write_text(re.sub(r'- \\[ \\] (Understand|Build|Make|Clean)', " \
       "r'- [x] \\1', p.read_text()))"
SLURM = '\n[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\nmax_job_retries = 1\n'


def _solver(weight: str) -> str:
    return SOLVER.replace("WEIGHT", weight)


@pytest.fixture(scope="module")
def mpi_workspace(tmp_path_factory):
    """`nightshift init` on the reference, the oracle command set, the backend Slurm: nothing else from the user."""
    require_tool("git")
    require_tool("mpicc")
    ws = tmp_path_factory.mktemp("srun") / "ws"
    (ws / "reference").mkdir(parents=True)
    (ws / "reference" / "result.txt").write_text(REFERENCE)
    (ws / "solver.c").write_text(_solver("1.0"))  # the bug: the weight
    (ws / "agent.py").write_text(AGENT)
    out = nightshift("init", str(ws), "--goal", "y agrees to 1e-12 relative", "--reference-dir", "reference",
                     "--agent", "command", "--test-command", "test -f solver.c")
    assert out.returncode == 0, out.stderr
    edit_toml(ws, '\ncommand = ""', f'\ncommand = "{ORACLE}"')
    edit_toml(ws, 'kind = "tmux"', 'kind = "slurm"')
    edit_toml(ws, 'kind = "command"', f'kind = "command"\ncommand = "{sys.executable} agent.py"')
    (ws / "nightshift.toml").write_text((ws / "nightshift.toml").read_text() + SLURM)
    git_commit(ws)
    return ws


def _oracle_line(out: subprocess.CompletedProcess) -> str:
    return next(line for line in out.stdout.splitlines() if line[6:].startswith("oracle ") and "`" in line)


def test_check_names_what_srun_needs_then_a_run_ends_verified_done(slurm_cluster, mpi_workspace):  # noqa: F811
    ws = mpi_workspace
    out = nightshift("check", str(ws), timeout=300)
    line = _oracle_line(out)
    # srun's own words and the one setting, never "expected while the solver is not written"
    assert line.startswith("FAIL") and "srun: error" in line and "command_network = true" in line, out.stdout
    assert "expected while" not in line
    compare = nightshift("compare", str(ws), "--json", timeout=300)
    said = json.loads(compare.stdout)
    assert compare.returncode == 1 and "command_network = true" in said["summary"], said["summary"]
    assert "not written: the oracle command failed" in said["summary"]

    edit_toml(ws, 'sandbox = "auto"', 'sandbox = "auto"\ncommand_network = true')
    git_commit(ws)
    out = nightshift("check", str(ws), timeout=300)
    line = _oracle_line(out)
    assert line.startswith("ok") and "exited 0" in line, out.stdout
    # the same boundary in compare: srun runs, and the bug is measured (the candidate is written)
    compare = nightshift("compare", str(ws), "--json", timeout=300)
    said = json.loads(compare.stdout)
    assert compare.returncode == 1 and said["command"]["status"] == 0, said["summary"]

    from nightshift.supervisor.run.events import read_events
    from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground

    wrong = [["claim", "done", "it runs on 2 ranks (the weight is still wrong)"]]
    fix = [["write", "solver.c", _solver("0.5")], ["shell", f"{sys.executable} -c \"{DONE}\""],
           ["append", "CHANGELOG.md", "\n- The weight of each rank's share is 0.5: fixed; 2 ranks with srun.\n"],
           ["claim", "done", "fixed the weight"]]
    (ws / "agent_script.json").write_text(json.dumps({"s1t1": wrong, "s1t2": fix}))
    git_commit(ws)
    run = create_run(ws, resolve_config(ws))
    assert run_foreground(run, say=lambda _: None) == 0
    events = read_events(run.events).events
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    assert verdicts and not verdicts[0]["passed"], verdicts[:1]
    assert events[-1]["data"]["outcome"] == "done", [e["type"] for e in events][-8:]
    # inside an allocation (salloc: SLURM_JOB_ID set), the oracle's srun starts its ranks as a step of that job
    inside = subprocess.run(["salloc", "-n", "2", "--time=5", sys.executable, "-m", "nightshift.supervisor.cli.main",
                             "compare", str(ws), "--json"], capture_output=True, text=True, timeout=300)
    said = json.loads(inside.stdout)
    assert inside.returncode == 0 and said["passed"] and said["command"]["status"] == 0, (said["summary"], inside.stderr)


def test_srun_missing_on_the_node_is_named_with_its_fix(mpi_workspace, tmp_path):
    """A node whose PATH has everything but Slurm's commands (the compiler still builds the solver)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        for tool in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else []:
            if not tool.name.startswith(("srun", "sbatch", "salloc", "squeue", "sinfo", "scontrol", "scancel", "sacct")) \
                    and not (bin_dir / tool.name).exists():
                (bin_dir / tool.name).symlink_to(tool)
    out = nightshift("check", str(mpi_workspace), env={"PATH": str(bin_dir)}, timeout=300)
    line = _oracle_line(out)
    assert line.startswith("FAIL") and "srun is not on this node's PATH" in line and "put their folder" in line, \
        out.stdout
