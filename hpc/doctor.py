"""`nightshift doctor --slurm`: submit a tiny job with the workspace's [slurm] settings and report what the job's
environment lacks (claude, git, tmux, Python packages, the oracle's program, the API credential's presence,
never its value), each with its fix.

The job is rendered from the same template as every nightshift job (modules, setup and env included) and runs
``nightshift.hpc.doctor_probe`` with this nightshift's own Python, which is what a `nightshift submit` job runs too. Its
files live in a private temporary folder under the workspace (on the shared filesystem, so the node can write
there) and are removed afterwards.
"""
from __future__ import annotations

import json
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from nightshift.hpc.client import make_client
from nightshift.hpc.errors import SlurmError
from nightshift.hpc.script import BatchJob, read_status, write_script
from nightshift.supervisor.run.own_python import python_line

# What the supervisor and the agent's tooling import in a job (nightshift's own rooms included).
PACKAGES = ("nightshift.supervisor", "nightshift.hpc", "pydantic", "git", "libtmux", "watchdog", "anthropic", "numpy")
Row = tuple[bool, str, str]


def _config(workspace: Path):
    from nightshift.supervisor.config.schema import Config
    from nightshift.supervisor.shift.launcher import resolve_config

    if (workspace / "nightshift.toml").is_file():
        return resolve_config(workspace)
    return Config.model_validate({"goal": "nightshift doctor"})


def run_probe(workspace: Path, say: Callable[[str], None] = print, timeout: float = 600) -> tuple[dict | None, str]:
    """Submit the probe job and wait for its report; (report or None, the job's log for a failure)."""
    config = _config(workspace)
    slurm = config.slurm.model_copy(update={"time": "5:00", "grace": 30})
    client = make_client(slurm.client)
    oracle = shlex.split(config.oracle.command)[0] if getattr(config, "oracle", None) and config.oracle.command else None
    wanted = {"packages": list(PACKAGES), "env": list(slurm.env), "oracle_program": oracle}
    state_dir = workspace / ".nightshift"
    state_dir.mkdir(mode=0o700, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="doctor-", dir=state_dir))
    try:
        out = folder / "report.json"
        work = (f"{python_line('nightshift.hpc.doctor_probe', str(out))} "
                f"{shlex.quote(json.dumps(wanted))}")
        job = BatchJob(job_name="ns-doctor", work=work, workdir=workspace, log_file=folder / "job.log",
                       status_file=folder / "job.json", signal_file=folder / "walltime",
                       description="nightshift doctor --slurm: what a job's environment holds")
        job_id = client.submit(write_script(slurm, job, folder / "doctor.sbatch"))
        say(f"submitted job {job_id} with the [slurm] settings of {workspace / 'nightshift.toml'}; waiting for it ...")
        deadline, shown, ended = time.monotonic() + timeout, "", False
        while time.monotonic() < deadline and read_status(job.status_file) is None and not ended:
            info = client.query([job_id]).get(job_id)
            if info is not None and info.summary() != shown:
                shown = info.summary()
                say(f"  job {job_id}: {shown}")
            ended = info is not None and info.terminal  # e.g. a module that did not load, before the EXIT trap
            time.sleep(0 if ended else 2)
        if read_status(job.status_file) is None and not ended:
            client.cancel(job_id)
            raise SlurmError(f"the doctor's job {job_id} did not run within {timeout:.0f}s ({shown or 'no state'}); "
                             "check the partition and account in [slurm] with `sinfo` and `squeue -u $USER`")
        time.sleep(1 if ended else 0)  # the log of a job that just ended may lag on a shared filesystem
        log = (folder / "job.log").read_text(errors="replace") if (folder / "job.log").exists() else ""
        report = json.loads(out.read_text()) if out.exists() else None
        return report, log
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def rows_from(report: dict | None, log: str, env: list[str]) -> list[Row]:
    """(ok, what, detail or fix) for each thing the job needs."""
    if report is None:
        last = [line for line in log.splitlines() if line.strip()][-3:]
        return [(False, "python in the job", f"the probe did not run in the job ({sys.executable}); fix [slurm] "
                 f"modules/setup, or install nightshift where the compute nodes see it. The job said: "
                 f"{' | '.join(last) or '(nothing)'}")]
    rows: list[Row] = [(True, "job ran on", f"{report['host']} with Python {report['python_version']}")]
    tools = report["tools"]
    fixes = {"claude": "claude is not on the job's PATH: add its folder with [slurm] env PATH or a setup line "
                       f"(here it is {shutil.which('claude') or 'missing too'})",
             "git": "git is not on the job's PATH: add a module (e.g. [slurm] modules = [\"git\"]) or a setup line",
             "tmux": "tmux is not on the job's PATH: `nightshift submit` then runs the agent without a pane to attach "
                     "to; add a module or a setup line"}
    for tool in ("claude", "git", "tmux"):
        found = tools[tool]
        rows.append((bool(found["version"]), tool, f"{found['version']} at {found['path']}" if found["version"]
                     else fixes[tool]))
    for name, found in report["packages"].items():
        rows.append((found, f"python: {name}", "importable" if found else
                     f"not importable with {report['python']}: install nightshift's environment where the nodes "
                     "see it, or activate it in [slurm] setup"))
    creds = report["credentials"]
    rows.append((bool(creds) or report["claude_login"], "credentials",
                 f"{', '.join(creds)} set in the job (value not shown)" if creds else
                 "a Claude login is present" if report["claude_login"] else
                 "no API key reached the job: export ANTHROPIC_API_KEY in the shell you submit from (sbatch passes "
                 "your environment), never in nightshift.toml"))
    for name in env:
        rows.append((report["env"].get(name, False), f"env: {name}", "set in the job" if report["env"].get(name)
                     else "[slurm] env did not reach the job: check the setup line does not reset it"))
    oracle = report["oracle_program"]
    if oracle.get("name"):
        rows.append((bool(oracle.get("path")), f"oracle: {oracle['name']}", oracle.get("path") or
                     f"{oracle['name']} (the first word of [oracle] command) is not on the job's PATH: load its "
                     "module or activate its environment in [slurm] setup"))
    if report.get("modules"):
        rows.append((True, "modules loaded", report["modules"]))
    return rows


def slurm_doctor_main(workspace: Path) -> int:
    workspace = Path(workspace).expanduser().resolve()
    try:
        report, log = run_probe(workspace)
    except SlurmError as exc:
        print(f"nightshift: {exc}", file=sys.stderr)
        return 2
    rows = rows_from(report, log, list(_config(workspace).slurm.env))
    for ok, what, detail in rows:
        print(f"{'ok ' if ok else 'MISSING'}  {what:22} {detail}")
    missing = [what for ok, what, _ in rows if not ok]
    print("the job's environment has everything nightshift needs" if not missing else
          f"missing in the job: {', '.join(missing)}")
    return 1 if missing else 0
