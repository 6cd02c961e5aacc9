"""Benchmark: a verdict after a one-file change of a C code whose build takes a while, in nightshift's verdict tree
(verify/verdict_tree.py: synced from the candidate's tree, nightshift's own build outputs kept between verdicts),
beside the same rebuild in the workspace. Goal (issue 45): the verdict rebuilds only what make would, so its
seconds are the workspace's rebuild plus the sync and the namespace.

The code: --files C files, each a few hundred lines of arithmetic at -O2 (about --files x 0.1-0.3 s to build on
one core), a Makefile, a reference committed. Figures: the first verdict (a full build in the tree), the workspace's
full build, then after changing one file: the workspace's `make`, and the verdict (sync + oracle command in the
namespace + the comparison), with the sync alone.

Also: what the tree adds to the verdict's oracle on a small Python workspace (median of --repeat).

Run: .venv/bin/python bench/bench_verdict_tree.py [--files 40] [--repeat 7]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nightshift.supervisor.config.oracle import OracleConfig  # noqa: E402
from nightshift.supervisor.sandbox.boundary import boundary_for_oracle  # noqa: E402
from nightshift.supervisor.verify import verdict_tree  # noqa: E402
from nightshift.supervisor.verify.oracle.check import run_oracle  # noqa: E402

MAKEFILE = ("OBJ := $(patsubst %.c,%.o,$(wildcard src/*.c))\nsolver: $(OBJ)\n\tcc -o solver $(OBJ) -lm\n"
            "src/%.o: src/%.c\n\tcc -O2 -c $< -o $@\n")
COMMAND = "make -s -j1 && mkdir -p out && ./solver > out/result.dat"


def unit(i: int, terms: int = 300, salt: int = 0) -> str:
    body = "\n".join(f"  x = x * 0.999 + sin(x * {k + 1}.0 + {i + salt}.0) / {k + 2}.0;" for k in range(terms))
    return f"#include <math.h>\ndouble f{i}(double x) {{\n{body}\n  return x;\n}}\n"


def make_workspace(root: Path, files: int) -> tuple[Path, OracleConfig]:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    for i in range(files):
        (ws / "src" / f"f{i}.c").write_text(unit(i))
    decls = "".join(f"double f{i}(double);\n" for i in range(files))
    calls = "".join(f"  s += f{i}(0.{i + 1});\n" for i in range(files))
    (ws / "src" / "main.c").write_text(f"#include <stdio.h>\n{decls}int main(void) {{ double s = 0;\n{calls}"
                                       '  printf("# 1:x 2:y\\n1 %.17g\\n2 %.17g\\n", s, 2 * s); return 0; }\n')
    (ws / "Makefile").write_text(MAKEFILE)
    (ws / ".gitignore").write_text("solver\n*.o\nout/\n")
    (ws / "reference").mkdir()
    (ws / "reference" / "result.dat").write_text("# 1:x 2:y\n1 1\n2 2\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "code"], cwd=ws, check=True)
    cfg = OracleConfig.model_validate({"command": COMMAND, "timeout": 3600, "compare": [
        {"name": "result", "candidate": "out/result.dat", "reference": "reference/result.dat", "rtol": 1.0}]})
    return ws, cfg


def verdict(ws: Path, cfg: OracleConfig, home: Path, out: Path) -> tuple[float, float]:
    started = time.perf_counter()
    boundary = boundary_for_oracle(ws, cfg)
    tree = verdict_tree.sync(ws, home, verdict_tree.references_of(boundary))
    synced = time.perf_counter() - started
    outcome = run_oracle(cfg, ws, out, None, boundary=verdict_tree.boundary_in(boundary, tree.path), tree=tree.path)
    status = (outcome.report.get("command") or {}).get("status")
    if status != 0:
        raise SystemExit(f"the oracle command failed in the verdict's tree: {outcome.report.get('command')}")
    return time.perf_counter() - started, synced


def timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def small_verdict(root: Path, repeat: int) -> None:
    """The verdict's oracle on a small Python workspace (the demo's size), in the workspace as before and in the
    verdict's tree (sync included): what the tree adds to every verdict."""
    ws = root / "small"
    (ws / "reference").mkdir(parents=True)
    rows = "".join(f"{n} {1.0 / (n + 0.5)!r}\n" for n in range(1, 2001))
    (ws / "reference" / "result.dat").write_text("# 1:x 2:y\n" + rows)
    (ws / "solver.py").write_text("import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.dat', 'w').write("
                                  "'# 1:x 2:y\\n' + ''.join(f'{n} {1.0 / (n + 0.5)!r}\\n' for n in range(1, 2001)))\n")
    for i in range(30):
        (ws / f"mod{i}.py").write_text(f"X = {i}\n" * 50)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "code"], cwd=ws, check=True)
    cfg = OracleConfig.model_validate({"command": f"{sys.executable} solver.py", "compare": [
        {"name": "result", "candidate": "out/result.dat", "reference": "reference/result.dat", "rtol": 1e-9}]})
    boundary = boundary_for_oracle(ws, cfg)
    plain, treed = [], []
    for n in range(repeat):
        started = time.perf_counter()
        run_oracle(cfg, ws, root / f"p{n}", None, boundary=boundary)
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        tree, inside = verdict_tree.prepare(ws, ws, boundary)
        run_oracle(cfg, ws, root / f"t{n}", None, boundary=inside, tree=tree.path)
        treed.append(time.perf_counter() - started)
    a, b = statistics.median(plain), statistics.median(treed)
    print(f"small workspace (32 files), oracle of a verdict, median of {repeat}: in the workspace {a * 1000:.0f} ms, "
          f"in the verdict's tree {b * 1000:.0f} ms (+{(b - a) * 1000:.0f} ms, sync and its git included)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verdict-tree-") as tmp:
        root = Path(tmp)
        small_verdict(root, args.repeat)
        ws, cfg = make_workspace(root, args.files)
        home = root / "home"
        first, _ = verdict(ws, cfg, home, root / "o1")
        full = timed(["make", "-s", "-j1"], ws)
        print(f"{args.files + 1} C files: full build in the workspace {full:.2f} s; first verdict (full build in "
              f"the verdict's tree, sync and namespace included) {first:.2f} s")
        (ws / "src" / "f0.c").write_text(unit(0, salt=1))  # one file changed, not committed: the candidate's tree
        ws_rebuild = timed(["make", "-s", "-j1"], ws)
        again, synced = verdict(ws, cfg, home, root / "o2")
        print(f"one file changed: `make` in the workspace {ws_rebuild:.2f} s; the verdict {again:.2f} s "
              f"(sync of the tree {synced * 1000:.0f} ms), {again / ws_rebuild:.2f}x the workspace's rebuild")


if __name__ == "__main__":
    main()
