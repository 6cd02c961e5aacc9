"""Attestation benchmark (issue 31): a run with 100 comparisons whose references total 1 GB (and candidates of the
same sizes), attested with `nightshift attest` and checked with `nightshift verify-result` (no --rerun), each as
the user runs it (a fresh process). Prints the wall time and the peak resident memory of each against the goals:
attest under 2 s, verify under 2 s, memory flat in the data's size (the digests stream in 1 MiB chunks; goal under
200 MB for 1 GB of data). Also the bytes each one hashed and its throughput, and the cost of the standard
statements (in-toto test-result, SLSA VSA) an attestation writes beside its own and verify-result checks: built,
signed and checked in this process, goal under 50 ms.

The run directory is written directly (the events of one verified done, the oracle's report, the references'
manifest as a run takes it at its start): the figures are attestation's, not a run's.

Usage: python bench/bench_attest.py [--gb 1.0] [--files 100]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from _common import against_goal, info  # noqa: E402

RUN_ID = "20261125-000000-bnch"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "core.hooksPath=/dev/null"]


def event(seq: int, kind: str, shift: int | None, data: dict) -> str:
    return json.dumps({"v": 1, "seq": seq, "ts": f"2026-11-25T00:00:{seq:02d}.000000Z", "type": kind, "shift": shift,
                       "data": data}) + "\n"


def write_file(path: Path, size: int, seed: int) -> str:
    """A file of ``size`` pseudo-random bytes (not compressible, not all alike); its sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    block, digest, left = hashlib.sha256(str(seed).encode()).digest() * 32768, hashlib.sha256(), size
    with open(path, "wb") as fh:
        while left:
            chunk = block[: min(len(block), left)]
            fh.write(chunk)
            digest.update(chunk)
            left -= len(chunk)
            block = block[1:] + block[:1]
    return digest.hexdigest()


def build(root: Path, files: int, total: int) -> Path:
    ws = root / "ws"
    ws.mkdir()
    size = total // files
    toml = 'goal = "bench"\n[agent]\nkind = "demo"\n[oracle]\ncommand = "true"\n'
    toml += "".join(f'[[oracle.compare]]\nname = "c{n:03d}"\ncandidate = "out/c{n:03d}.dat"\n'
                    f'reference = "reference/r{n:03d}.dat"\nrtol = 1e-6\n' for n in range(files))
    (ws / "nightshift.toml").write_text(toml)
    (ws / ".gitignore").write_text("out/\nreference/\n.nightshift/\n")
    manifest, comparisons = {}, []
    for n in range(files):
        manifest[f"reference/r{n:03d}.dat"] = {"sha256": write_file(ws / "reference" / f"r{n:03d}.dat", size, n),
                                               "size": size, "copy": f"files/{n:03d}"}
        write_file(ws / "out" / f"c{n:03d}.dat", size, n)
        comparisons.append({"name": f"c{n:03d}", "heldout": False, "passed": True, "ratio": 0.5,
                            "candidate": f"out/c{n:03d}.dat", "reference": f"reference/r{n:03d}.dat", "x": None,
                            "columns": [{"column": "y", "rtol": 1e-6, "atol": 0.0, "points": size // 16,
                                         "failing": 0, "passed": True, "ratio": 0.5, "rel_worst": 5e-7,
                                         "x_worst": 3.0, "row_worst": 7}]})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run([*GIT, "-C", str(ws), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(ws), "commit", "-qm", "bench"], check=True)
    head = subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    run = ws / ".nightshift" / "runs" / RUN_ID
    (run / "shifts" / "1" / "t1.oracle").mkdir(parents=True)
    (run / "references").mkdir()
    (run / "config.toml").write_text(toml)
    (run / "references" / "manifest.json").write_text(json.dumps({"v": 1, "references": manifest}))
    (run / "shifts" / "1" / "t1.oracle" / "oracle.json").write_text(json.dumps({"v": 1, "comparisons": comparisons}))
    checks = [{"name": "oracle", "passed": True, "summary": "oracle: all pass", "lines": []}]
    (run / "events.jsonl").write_text(
        event(1, "run.created", None, {"run_id": RUN_ID, "workspace": str(ws), "goal": "bench", "base": head})
        + event(2, "shift.started", 1, {"base": head})
        + event(3, "agent.stopped", 1, {"turn": 1, "reason": "exit", "claim": {"status": "done", "summary": "x"}})
        + event(4, "verify.finished", 1, {"turn": 1, "passed": True, "claimed": "done", "summary": "PASS",
                                          "checks": checks, "metric": 0.5})
        + event(5, "commit.created", 1, {"turn": 1, "sha": head, "head": head, "passed": True}))
    return ws


def timed(argv: list[str], cwd: Path, env: dict) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB of this very child, its output): each verb in a process of its own, as a user runs
    it; os.wait4 gives the child's own resource use (RUSAGE_CHILDREN would be the largest of all children)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    assert proc.returncode == 0, text
    return seconds, usage.ru_maxrss / 1024, text


def standard_cost(envelope_file: Path, key_file: Path, rounds: int = 20) -> float:
    """Milliseconds per attestation for the test-result and VSA statements: made from our own statement, sealed
    with the key, and checked beside it (what `attest` and `verify-result` add for them), best of ``rounds``."""
    from nightshift.supervisor.attest.bundle import Item
    from nightshift.supervisor.attest.envelope import open_envelope
    from nightshift.supervisor.attest.findings import Findings
    from nightshift.supervisor.attest.keys import signing_key
    from nightshift.supervisor.attest.standard import check_companions, test_result, vsa
    from nightshift.supervisor.attest.envelope import seal
    envelope, statement = open_envelope(json.loads(envelope_file.read_text()), str(envelope_file))
    signer = signing_key(key_file)
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        made = [seal(test_result(statement), signer), seal(vsa(statement, None), signer)]
        items = [Item(*open_envelope(e, "bench"), {}, "bench") for e in made]
        check_companions(items, statement, signer.public, Findings())
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="total size of the references (default 1 GB)")
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    total = int(args.gb * (1 << 30))
    with tempfile.TemporaryDirectory(prefix="bench-attest-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "XDG_STATE_HOME": str(root / "state"), "XDG_CONFIG_HOME": str(root / "config"),
               "HOME": str(root / "home"), "SSH_AUTH_SOCK": ""}
        nightshift = [sys.executable, "-m", "nightshift.supervisor.cli.main"]
        subprocess.run([*nightshift, "attest", "--new-key"], env=env, check=True, capture_output=True)
        print(f"bench_attest: {args.files} references totalling {total / (1 << 30):.2f} GB, candidates of the same "
              f"sizes, page cache warm; {os.cpu_count()} cores (shared with whatever else runs on this machine)")
        ws = build(root, args.files, total)
        run = ws / ".nightshift" / "runs" / RUN_ID
        # the first pass reads from disk into the page cache; the figures are of the second, as on a warm system
        timed([*nightshift, "attest", str(run)], ws, env)
        attest_s, attest_mb, out = timed([*nightshift, "attest", str(run)], ws, env)
        assert "signed by" in out, out
        envelope = run / "attestations" / "verdict-1.dsse.json"
        verify_s, verify_mb, out = timed([*nightshift, "verify-result", str(envelope)], ws, env)
        assert "VERIFIED" in out, out
        start_s, _mb, _ = timed([*nightshift, "attest", "--help"], ws, env)
        standard_ms = standard_cost(envelope, root / "config" / "nightshift" / "attest_ed25519")
    print(info("data attest hashes (the candidates)", round(total / (1 << 20)), "MB"))
    print(info("data verify hashes (references and candidates)", round(2 * total / (1 << 20)), "MB"))
    print(info("`nightshift attest --help` (the interpreter and the parser)", start_s, "s"))
    print(against_goal("nightshift attest: wall time", attest_s, 2.0, "s"))
    print(against_goal("nightshift verify-result (no --rerun): wall time", verify_s, 2.0, "s"))
    print(info("attest throughput", round(total / (1 << 20) / attest_s), "MB/s"))
    print(info("verify throughput", round(2 * total / (1 << 20) / verify_s), "MB/s"))
    print(against_goal("the standard statements beside it: built, signed and checked", standard_ms, 50, "ms"))
    print(against_goal("nightshift attest: peak memory", attest_mb, 200, "MB"))
    print(against_goal("nightshift verify-result: peak memory", verify_mb, 200, "MB"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
