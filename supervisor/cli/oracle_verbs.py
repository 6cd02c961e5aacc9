"""The oracle's CLI verbs: ``nightshift compare`` (run the oracle on the workspace now, print a table or JSON)
and ``nightshift plot RUN`` (a PNG of the worst relative error per comparison across the run's verdicts).

Exit codes of compare: 0 every comparison passes, 1 any fails, 2 an error (no or broken nightshift.toml).
"""
from __future__ import annotations

import io
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path

from nightshift.supervisor.cli.output_file import STDOUT, refuse_unless_replaceable, write_output
from nightshift.supervisor.verify.oracle.report import fmt, where

HISTORY = re.compile(r"shifts/(\d+)/t(\d+)\.oracle/oracle\.json$")


def _fail(verb: str, message: str) -> int:
    print(f"nightshift {verb}: {message}", file=sys.stderr)
    return 2


def compare_fast(argv: list[str]) -> int:
    """`nightshift compare` from the command line without building every verb's parser or registering Slurm
    (~30 ms of a process whose floor is the interpreter, numpy and the parse; the agent runs it at every stop).
    The options are the ones cli/parser.py declares for the verb, so `nightshift compare --help` reads the same."""
    import argparse

    from nightshift.supervisor.cli.parser import COMPARE, COMPARE_CODES, compare_arguments

    parser = compare_arguments(argparse.ArgumentParser(prog="nightshift compare", description=COMPARE,
                                                       epilog=COMPARE_CODES,
                                                       formatter_class=argparse.RawDescriptionHelpFormatter))
    args = parser.parse_args(argv)
    return compare_main(Path(args.dir), as_json=args.json, full=not args.fast, columns=args.columns)


def compare_main(workspace: Path, as_json: bool, full: bool, columns: bool = False) -> int:
    from nightshift.supervisor.config.oracle_view import cached_config, keep_config
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.verify.oracle.check import run_oracle
    from nightshift.supervisor.verify.oracle.exam import AT_CLAIM

    config, key = cached_config(Path(workspace))  # the same bytes validated before: no pydantic to load
    if config is None:
        from nightshift.supervisor.config.schema import ConfigError, load_config
        try:
            config = load_config(Path(workspace))
        except ConfigError as exc:
            return _fail("compare", str(exc))
        keep_config(Path(workspace), key, config)
    oracle = config.oracle
    if oracle is None or not (oracle.compare or oracle.command):
        return _fail("compare", f"{Path(workspace) / 'nightshift.toml'} has no [oracle] comparisons; add "
                     "[[oracle.compare]] entries (see README, 'Oracle')")
    # Inside a run (the agent's turn) a held-out comparison says only that it is evaluated at a claim of done;
    # the user's own compare, outside a run, shows everything.
    inside = bool(os.environ.get("NIGHTSHIFT_RUN_DIR") or os.environ.get("NIGHTSHIFT_NAMESPACE"))
    in_turn = bool(os.environ.get("NIGHTSHIFT_NAMESPACE"))  # the agent's turn: its stop's verdict decides an exact match
    later = [c.name for c in oracle.compare if c.heldout] if inside else []
    if later:  # not even read here (the namespace hides them): each is named with when it is evaluated
        oracle = oracle.model_copy(update={"compare": [c for c in oracle.compare if not c.heldout]})
    with tempfile.TemporaryDirectory(prefix="nightshift-compare-") as tmp:
        # the boundary the run's verdict gives the command ([policy] command_network, sockets, ...): one place
        outcome = run_oracle(oracle, Path(workspace).resolve(), Path(tmp), None, full=full, in_turn=in_turn,
                             heldout_left_out=len(later), boundary=boundary_for(Path(workspace), config))
        report = dict(outcome.report)
        report["comparisons"] = report["comparisons"] + [
            {"name": name, "heldout": True, "result": AT_CLAIM, "passed": None} for name in later]
        report["summary"] += f" ({len(later)} held-out: {AT_CLAIM})" if later else ""
        if report.get("command"):  # the temporary logs vanish with this process: keep their tail only
            report["command"] = {k: v for k, v in report["command"].items() if k not in ("stdout", "stderr")}
    if as_json:
        print(json.dumps(report, indent=1))
    else:
        print(render_table(report, columns))
    return 0 if outcome.passed else 1


def render_table(report: dict, per_column: bool = False) -> str:
    """One line per comparison (a field, or a table by its worst column: "TT (of 3)"); every column of a table
    with ``per_column`` (`nightshift compare --columns`)."""
    head = ("comparison", "column", "points", "fail", "max rel", "at", "max abs", "median rel", "p95 rel",
            "err/tol", "")
    rows = [head]
    for entry in report["comparisons"]:
        name = ("held-out " if entry.get("heldout") else "") + entry["name"]
        if "result" in entry:  # held-out, as the agent may see it
            rows.append((name, "-", "-", "-", "-", "-", "-", "-", "-", "-", entry["result"]))
            continue
        if entry.get("error"):
            rows.append((name, "-", "-", "-", "-", "-", "-", "-", "-", "-", "ERROR"))
            continue
        cols = entry.get("columns", [])
        shown = cols if per_column or len(cols) < 2 else [max(cols, key=lambda c: float(c["ratio"]))]
        for col in shown:
            verdict = "pass" if col["passed"] and (per_column or entry.get("passed", True)) else "FAIL"
            verdict += " (bit for bit)" if verdict == "pass" and entry.get("exact") else ""
            label = "(field)" if col.get("kind") == "field" else str(col["column"])
            if len(shown) < len(cols):
                label += f" (worst of {len(cols)})"
            failing = col["failing"] if len(shown) == len(cols) else sum(c["failing"] for c in cols)
            points = col["points"] if len(shown) == len(cols) else sum(c["points"] for c in cols)
            rows.append((name, label, str(points), str(failing), fmt(float(col["max_rel"])),
                         # bit for bit: no point is the worst one
                         where(entry, col, "max_rel") if float(col["max_rel"]) else "-", fmt(float(col["max_abs"])),
                         fmt(float(col["median_rel"])),
                         fmt(float(col["p95_rel"])), fmt(float(col["ratio"])), verdict))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{e['name']}: {e['error']}" for e in report["comparisons"] if e.get("error")]
    notes += [f"{e['name']}: {e['uncovered']['count']} reference points not covered by the candidate"
              for e in report["comparisons"] if e.get("uncovered")]
    notes += [f"{e['name']}: {e['note']}" for e in report["comparisons"] if e.get("note")]
    notes += list(report.get("exact", []))  # matched bit for bit, and what proves it was computed
    return "\n".join(lines + [""] + notes + list(report.get("problems", [])) + [report["summary"]])


def load_history(run_root: Path) -> list[tuple[int, int, dict]]:
    """Every verdict's oracle report of a run, in order: (shift, turn, report); the preflight's report, the
    oracle before the agent's first change, comes first as shift 0."""
    out = []
    try:
        out.append((0, 0, json.loads((Path(run_root) / "preflight" / "oracle" / "oracle.json").read_text())))
    except (OSError, ValueError):
        pass  # started with --no-check, or before the preflight existed
    for path in Path(run_root).glob("shifts/*/t*.oracle/oracle.json"):
        match = HISTORY.search(path.as_posix())
        if not match:
            continue
        try:
            out.append((int(match.group(1)), int(match.group(2)), json.loads(path.read_text())))
        except (OSError, ValueError):
            continue  # a report being written right now; the next plot has it
    return sorted(out, key=lambda item: item[:2])


def history_series(run_root: Path) -> tuple[list[str], dict[str, list[float]], dict[str, float]]:
    """(verdict labels, worst relative error per comparison per verdict, tolerance line per comparison)."""
    from nightshift.supervisor.verify.oracle.exam import read_private

    history = load_history(run_root)
    labels = [f"s{s}t{t}" if s else "before" for s, t, _ in history]
    series: dict[str, list[float]] = {}
    tolerance: dict[str, float] = {}
    for n, (shift, turn, report) in enumerate(history):
        full = {e["name"]: e for e in (read_private(run_root, shift, turn) or {}).get("comparisons", [])}
        for entry in report.get("comparisons", []):
            entry = full.get(entry["name"], entry)  # held-out: the user's full figures, kept privately
            name, cols = entry["name"], entry.get("columns") or []
            values = series.setdefault(name, [math.nan] * len(history))
            if cols:
                values[n] = max(float(c["max_rel"]) for c in cols)
                tolerance[name] = min(float(c["rtol"]) for c in cols)
    return labels, series, tolerance


def plot_main(run_root: Path, out: Path | None) -> int:
    if out is not None and str(out) != STDOUT:
        refuse_unless_replaceable(Path(out))  # before any work: the answer does not depend on it
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return _fail("plot", "needs matplotlib; pip install matplotlib (or the nightshift[plot] extra)")
    labels, series, tolerance = history_series(run_root)
    if not labels:
        return _fail("plot", f"no oracle reports under {Path(run_root) / 'shifts'} yet; plot after a verdict")
    out = Path(out) if out else Path(run_root) / "oracle-history.png"
    fig, ax = plt.subplots(figsize=(max(6.0, 0.4 * len(labels)), 4.0))
    for n, (name, values) in enumerate(sorted(series.items())):
        color = f"C{n % 10}"
        shown = [v if math.isfinite(v) and v > 0 else math.nan for v in values]
        ax.plot(range(len(labels)), shown, marker="o", color=color, label=name)
        if name in tolerance:
            ax.axhline(tolerance[name], color=color, linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("worst relative error (dashed: rtol)")
    ax.set_title(f"oracle history of run {Path(run_root).name}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    png = io.BytesIO()
    try:
        fig.savefig(png, format="png", dpi=100)
    finally:
        plt.close(fig)
    write_output(out, png.getvalue())  # never over a device, link or folder; -o - to standard output
    if str(out) != STDOUT:
        print(out)
    return 0
