"""`nightshift report RUN [--open] [-o FILE]`: the morning report of a run, as one self-contained HTML file
(default ``<run dir>/report.html``) and a short summary on the terminal. Built from the run directory alone;
whatever is missing or unreadable is named in the report, never a traceback.
"""
from __future__ import annotations

import sys
from pathlib import Path

from nightshift.supervisor.cli.watch.heldout import default_report_path, report_lines
from nightshift.supervisor.cli.report.data import Report, gather
from nightshift.supervisor.cli.report.heldout_tests import heldout_tests_lines
from nightshift.supervisor.cli.report.html import render_html, trust_line, verdict_line
from nightshift.supervisor.cli.report.timeline import timeline_png
from nightshift.supervisor.cli.output_file import STDOUT, refuse_unless_replaceable, write_output
from nightshift.supervisor.errors import UserError


def resolve_run_dir(ref: str | None) -> Path:
    """A run id (see `nightshift ls`) or the path of a run directory, which may come from another machine."""
    if ref and Path(ref).is_dir() and ((Path(ref) / "events.jsonl").exists() or (Path(ref) / "shifts").is_dir()):
        return Path(ref)
    from nightshift.supervisor.run.registry import find_run
    return find_run(ref).root


def build_report(run_dir: Path, out: Path | None = None) -> tuple[Path, Report]:
    """Write the HTML report of ``run_dir``; returns (its path, the gathered report)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"{run_dir} is not a run directory; give a run id or path (see `nightshift ls`)")
    report = gather(run_dir)
    out = Path(out) if out else default_report_path(run_dir, bool(report.heldout) or report.heldout_tests is not None)
    workspace = run_dir.resolve().parent.parent.parent
    # the held-out figures only in a file outside the workspace (standard output may be sent anywhere: not there)
    full = str(out) != STDOUT and not out.resolve().is_relative_to(workspace)
    report.heldout_lines = report_lines(report, full=full) + heldout_tests_lines(report.heldout_tests, report.run_id, full)
    png, why = timeline_png(report.timeline, report.start_gap, report.heldout,
                            f"run {report.run_id}: worst error over tolerance per verdict")
    # private (0600) like the run directory: it quotes the goal, verdicts and lab notes
    write_output(out, render_html(report, png, why).encode("utf-8"))
    return out, report


def summary(report: Report, path: Path) -> str:
    """The terminal summary: the verdict line, the figures, what needed a person, what is missing."""
    _cls, line = verdict_line(report)
    lines = [f"report of run {report.run_id}: {path}", f"  {line}"]
    lines.append(f"  {trust_line(report)}")
    if report.final.get("reproduce"):
        lines.append(f"  reproduce: {report.final['reproduce']}")
    points = {k: v for k, v in (report.timeline[-1]["values"] if report.timeline else {}).items()
              if isinstance(v, (int, float))}
    if points:
        worst = max(points.items(), key=lambda kv: kv[1])
        lines.append(f"  {report.verdicts} verdicts; now worst {worst[0]} at {worst[1]:.3g}x its tolerance")
    from nightshift.supervisor.cli.report.human import needed
    asked = len(needed(report.human))
    lines.append(f"  {len(report.rows)} {'turns' if report.per_turn else 'shifts'} in the table; "
                 f"{len(report.failed_approaches)} failed approaches; "
                 + (f"{asked} event{'s' if asked != 1 else ''} needed a person" if asked else "nothing needed a person"))
    from nightshift.supervisor.cli.report.lanes import summary_lines
    lines += summary_lines(report.run_dir)
    from nightshift.supervisor.cli.report.attest import attest_lines  # issue #31: the run's signed attestations
    lines += [f"  {line}" for line in attest_lines(report.run_dir)]
    lines += [f"  {b}" for b in report.budget + report.heldout_lines]
    lines += [f"  missing: {m}" for m in report.missing]
    return "\n".join(lines)


def report_main(run_dir: Path, out: Path | None, open_it: bool) -> int:
    if open_it and str(out) == STDOUT:
        raise UserError("--open needs a file to open: drop -o - (or --open)")
    if out is not None and str(out) != STDOUT:
        refuse_unless_replaceable(Path(out))  # before any work: the answer does not depend on it
    path, report = build_report(run_dir, out)
    # with -o - the HTML is standard output, so the summary goes to standard error
    print(summary(report, path), file=sys.stderr if str(out) == STDOUT else sys.stdout)
    if open_it:
        import webbrowser
        if not webbrowser.open(path.resolve().as_uri()):
            print(f"nightshift: no browser found to open {path}; open it by hand", file=sys.stderr)
    return 0
