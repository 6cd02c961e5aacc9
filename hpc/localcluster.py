"""A private single-node Slurm on localhost (slurmctld, slurmd, munged) for tests and benchmarks.

Follows notes/slurm-localhost.md: config and state in a folder of our own, the config at
/etc/slurm/slurm.conf (where every client looks; an existing one is backed up and restored), daemons
stopped by their pid files only. Needs root and Debian's slurm-wlm and munge packages.
"""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from nightshift.supervisor.run.liveness import pid_alive

SLURM_CONF = Path("/etc/slurm/slurm.conf")
MARKER = "# nightshift private test cluster"
LOCK_FILE = Path("/tmp/nightshift-slurm-cluster.lock")
NEEDED = ("slurmctld", "slurmd", "munged", "munge", "unmunge", "sbatch", "squeue", "scontrol", "sinfo", "sdiag")


class ClusterUnavailable(Exception):
    """The cluster cannot be brought up here; the message says why and what to do."""


def _run(*argv: str, timeout: float = 15) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _stop_pid(path: Path, timeout: float = 15, fallback: int | None = None) -> None:
    pid = _read_pid(path) or fallback
    if pid is None or not pid_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


class LocalCluster:
    """One cluster "lab" with node ``localhost`` and partition ``debug``, rooted at ``base``."""

    partition = "debug"

    def __init__(self, base: Path | None = None, cpus: int = 32, min_job_age: int = 300):
        # Not under pytest's tmp_path: other pytest sessions on the machine prune old basetemps, which would
        # delete the controller's state and pid files under a running cluster.
        self._own_base = base is None
        self.base = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="nightshift-slurm-"))
        self.cpus = cpus
        self.min_job_age = min_job_age
        self.run_dir, self.log_dir = self.base / "run", self.base / "log"
        self.ctld_pid, self.slurmd_pid = self.run_dir / "slurmctld.pid", self.run_dir / "slurmd.pid"
        self._backup: Path | None = None
        self._started_munged = False
        self._lock = None
        self._pids: dict[Path, int | None] = {}

    # ----- checks -------------------------------------------------------------------------------
    @staticmethod
    def why_not() -> str | None:
        """Why a private cluster cannot be brought up here, or None when it can."""
        if os.geteuid() != 0:
            return "the localhost Slurm cluster needs root (it writes /etc/slurm/slurm.conf and runs slurmd)"
        missing = [name for name in NEEDED if not shutil.which(name) and not Path(f"/usr/sbin/{name}").exists()]
        if missing:
            return f"Slurm is not installed (missing {', '.join(missing)}); run .ci/install-tools slurm as root"
        return None

    # ----- bring-up -----------------------------------------------------------------------------
    def start(self, timeout: float = 90) -> "LocalCluster":
        reason = self.why_not()
        if reason:
            raise ClusterUnavailable(reason)
        self._take_lock(timeout=240)
        for d in (self.base / "slurmctld", self.base / "slurmd", self.run_dir, self.log_dir):
            d.mkdir(parents=True, exist_ok=True)
        self._stop_leftovers()
        for port in (6817, 6818):
            if _listening(port):
                raise ClusterUnavailable(f"something already listens on port {port} (a Slurm daemon not started by "
                                         "this session?); stop it, then run the tests again")
        self._write_conf()
        self._start_munge()
        self._start_controller()
        self.start_node()
        self.wait_ready(timeout)
        self._remember_pids()
        return self

    def _remember_pids(self) -> None:
        """Pids in memory too, so the daemons can be stopped even if their pid files vanish."""
        self._pids = {path: _read_pid(path) for path in (self.ctld_pid, self.slurmd_pid)}

    def _take_lock(self, timeout: float) -> None:
        """One cluster per machine: a second test session waits for the first, then gives up with the reason."""
        lock = open(LOCK_FILE, "w")
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._lock = lock  # only now is the cluster ours to set up and to tear down
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    lock.close()
                    raise ClusterUnavailable("another test session holds the localhost Slurm cluster "
                                             f"({LOCK_FILE}); run the Slurm tests one session at a time") from None
                time.sleep(1)

    def _stop_leftovers(self) -> None:
        """Daemons of an earlier session killed before it could stop them: found by its config's pid files."""
        try:
            old = SLURM_CONF.read_text()
        except FileNotFoundError:
            return
        if MARKER not in old:
            self._backup = SLURM_CONF.with_name(f"slurm.conf.nightshift-backup-{os.getpid()}")
            shutil.copy2(SLURM_CONF, self._backup)
            return
        for key in ("SlurmctldPidFile", "SlurmdPidFile"):
            match = re.search(rf"^{key}=(.+)$", old, re.M)
            if match:
                _stop_pid(Path(match.group(1).strip()))

    def _real_memory(self) -> int:
        out = _run("slurmd", "-C").stdout
        match = re.search(r"RealMemory=(\d+)", out)
        return int(match.group(1)) if match else 1024

    def _write_conf(self) -> None:
        # sched_interval/bf_interval 2 s: a test cluster schedules a waiting job within seconds; with Slurm's 60 s
        # default a job whose event-driven pass was skipped (under load, after a requeue) waited past tests' limits.
        b, log = self.base, self.log_dir
        text = f"""{MARKER} in {b}
ClusterName=lab
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation={b}/slurmctld
SlurmdSpoolDir={b}/slurmd
SlurmctldPidFile={self.ctld_pid}
SlurmdPidFile={self.slurmd_pid}
SlurmctldLogFile={log}/slurmctld.log
SlurmdLogFile={log}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=2,bf_interval=2
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={log}/jobcomp.txt
MinJobAge={self.min_job_age}
KillWait=5
OverTimeLimit=0
InactiveLimit=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self._real_memory()} State=UNKNOWN
PartitionName={self.partition} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
        SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
        tmp = SLURM_CONF.with_name(".slurm.conf.nightshift")
        tmp.write_text(text)
        os.replace(tmp, SLURM_CONF)

    def _start_munge(self) -> None:
        if self._munge_ok():
            return  # a munged is already running (ours from before, or the machine's): share it
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        result = _run("runuser", "-u", "munge", "--", "/usr/sbin/munged")
        if result.returncode != 0:
            raise ClusterUnavailable(f"munged would not start: {result.stderr.strip() or result.stdout.strip()}")
        self._started_munged = True
        deadline = time.monotonic() + 10
        while not self._munge_ok():
            if time.monotonic() > deadline:
                raise ClusterUnavailable("munged started but `munge -n | unmunge` fails")
            time.sleep(0.2)

    @staticmethod
    def _munge_ok() -> bool:
        cred = _run("munge", "-n")
        if cred.returncode != 0:
            return False
        return subprocess.run(["unmunge"], input=cred.stdout, capture_output=True, text=True).returncode == 0

    def _start_controller(self) -> None:
        result = _run("/usr/sbin/slurmctld")
        if result.returncode != 0:
            raise ClusterUnavailable(f"slurmctld would not start: {result.stderr.strip()}; see {self.log_dir}")

    def start_node(self) -> None:
        self._slurmd_started = time.time()
        result = _run("/usr/sbin/slurmd", "-N", "localhost")
        if result.returncode != 0:
            raise ClusterUnavailable(f"slurmd would not start: {result.stderr.strip()}; see {self.log_dir}")

    def stop_controller(self) -> None:
        _stop_pid(self.ctld_pid, fallback=self._pids.get(self.ctld_pid))

    def start_controller(self, wait: bool = True) -> None:
        self._start_controller()
        if wait:
            self.wait_ready()
            self._remember_pids()

    def restart_controller(self) -> None:
        self.stop_controller()
        self.start_controller(wait=True)

    # ----- readiness ----------------------------------------------------------------------------
    def wait_ready(self, timeout: float = 90) -> None:
        """Controller answers, node idle and registered since we started slurmd, a first scheduling pass done."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._ready():
                return
            time.sleep(0.3)
        raise ClusterUnavailable(f"the localhost Slurm cluster did not become ready in {timeout:.0f}s; "
                                 f"see {self.log_dir}")

    def _ready(self) -> bool:
        if "UP" not in _run("scontrol", "ping").stdout:
            return False
        if _run("sinfo", "-h", "-n", "localhost", "-o", "%t").stdout.strip() not in ("idle", "mix", "alloc"):
            return False
        node = _run("scontrol", "-o", "show", "node", "localhost").stdout
        match = re.search(r"SlurmdStartTime=(\S+)", node)
        if not match or match.group(1) in ("None", "Unknown"):
            return False
        started = time.mktime(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
        if started + 1 < self._slurmd_started:
            return False
        cycles = re.search(r"Main schedule statistics.*?Total cycles:\s*(\d+)", _run("sdiag").stdout, re.S)
        return bool(cycles and int(cycles.group(1)) >= 1)

    # ----- teardown -----------------------------------------------------------------------------
    def stop(self) -> None:
        if self._lock is None:  # never started (e.g. another session holds the cluster): touch nothing of theirs
            if self._own_base:
                shutil.rmtree(self.base, ignore_errors=True)
            return
        # Jobs first, so no job shell outlives the cluster; then the daemons, by pid file only.
        try:
            _run("scancel", "--user", "root", "--full")
        except subprocess.TimeoutExpired:
            pass  # a controller that does not answer is stopped all the same
        _stop_pid(self.slurmd_pid, fallback=self._pids.get(self.slurmd_pid))
        _stop_pid(self.ctld_pid, fallback=self._pids.get(self.ctld_pid))
        if self._started_munged:
            _stop_pid(Path("/run/munge/munged.pid"))
        if self._backup is not None and self._backup.exists():
            os.replace(self._backup, SLURM_CONF)
        elif SLURM_CONF.exists() and MARKER in SLURM_CONF.read_text():
            SLURM_CONF.unlink()
        if self._lock is not None:
            self._lock.close()
            self._lock = None
        if self._own_base:
            shutil.rmtree(self.base, ignore_errors=True)

    def info(self) -> dict:
        return {"base": str(self.base), "conf": str(SLURM_CONF), "partition": self.partition, "node": "localhost",
                "cpus": self.cpus, "logs": str(self.log_dir)}
