"""What `nightshift report` shows, gathered from a run directory alone (plus the workspace's CHANGELOG.md and
git history when they are there): the fold for totals and every verdict's metrics, one scan of the events for
the rest (see report_scan), the frozen config for limits and held-out comparisons.

Nothing here raises on bad input: whatever cannot be read is named in ``Report.missing`` and the rest renders.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.cli.report.human import budget_lines, human_events
from nightshift.supervisor.cli.report.scan import Scan, scan_events, ts_seconds
from nightshift.supervisor.run.state import load_state

TIMELINE_POINTS = 4000  # verdicts drawn at most (a figure is ~900 pixels wide)
PER_TURN_LIMIT = 1000  # more verdicts than this: one table row per shift instead of per turn
_TESTS = re.compile(r"tests: (\d+) passed")


@dataclass
class Row:
    """One row of the table: a turn (small runs) or a whole shift (long runs)."""

    shift: int
    turn: int | None
    started: str | None = None
    duration_s: float | None = None
    ended: str = ""
    verdict: str = ""
    passed: bool | None = None
    commits: list[str] = field(default_factory=list)
    diff: str = ""
    cost_usd: float = 0.0
    tokens: int | None = None
    context: int | None = None


@dataclass
class Report:
    run_id: str
    run_dir: Path
    state: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    per_turn: bool = True
    verdicts: int = 0
    timeline: list[dict[str, Any]] = field(default_factory=list)  # {label, shift, turn, values{name: ratio}, tests}
    start_gap: dict[str, float] = field(default_factory=dict)
    heldout: set[str] = field(default_factory=set)
    has_oracle: bool = False
    heldout_lines: list[str] = field(default_factory=list)  # the exam's account; its figures only outside the workspace
    failed_approaches: list[str] = field(default_factory=list)
    failed_note: str = ""
    human: list[dict[str, Any]] = field(default_factory=list)     # {ts, shift, kind, text}
    judge: list[dict[str, Any]] = field(default_factory=list)     # {shift, turn, record}
    budget: list[str] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    judge_off: str | None = None  # why this run's config has no judge ("no [judge] ..."); None: on, or unknown
    heldout_tests: Path | None = None  # the store of `init --holdout-tests` (None: the run holds no test out)


def _config(run_dir: Path, missing: list[str]) -> Any:
    from nightshift.supervisor.config.schema import parse_config
    try:
        return parse_config((run_dir / "config.toml").read_text(encoding="utf-8"), "config.toml")
    except FileNotFoundError:
        missing.append("config.toml is missing: limits and held-out comparisons unknown")
    except Exception as exc:  # noqa: BLE001 - an older or newer config still leaves a report of the events
        missing.append(f"config.toml could not be read ({str(exc)[:120]}); limits and held-out marks unknown")
    return None


def gather(run_dir: Path) -> Report:
    run_dir = Path(run_dir)
    try:
        state, _offset, warnings = load_state(run_dir)
    except Exception as exc:  # noqa: BLE001 - a log the fold cannot read still gets a report of what is there
        from nightshift.supervisor.run.state import empty_state
        state, warnings = empty_state(), [f"the event log could not be folded ({type(exc).__name__}: {exc})"[:200]]
    report = Report(run_dir.name, run_dir, state, missing=list(warnings))
    verdicts = len(state.get("metrics") or [])
    report.per_turn, report.verdicts = verdicts <= PER_TURN_LIMIT, verdicts
    scan = scan_events(run_dir / "events.jsonl", report.per_turn)
    report.missing += [w for w in scan.warnings if w not in report.missing]
    report.counts = dict(scan.counts)
    config = _config(run_dir, report.missing)
    if config is not None and config.oracle is not None:
        report.heldout = {c.name for c in config.oracle.compare if getattr(c, "heldout", False)}
        report.has_oracle = bool(config.oracle.compare)
    elif config is not None:
        report.missing.append("no oracle configured: no accuracy timeline (tests and verdicts only)")
    if config is not None:
        if config.verify.heldout_tests:
            report.heldout_tests = Path(config.verify.heldout_tests).expanduser()
        judge = config.judge
        report.judge_off = ("no [judge] in this run's config" if judge is None else
                            "[judge] enabled = false" if not judge.enabled else None)
    report.timeline = _timeline(state, scan)
    report.start_gap = _start_gap(state)
    report.rows = _turn_rows(scan, run_dir) if report.per_turn else _shift_rows(state, scan)
    _diff_sizes(report)
    report.failed_approaches, report.failed_note = failed_approaches(state.get("workspace"))
    report.human = human_events(scan, report.run_id)
    report.judge = _judge(report, scan)
    report.budget = budget_lines(state, scan, config, run_dir)
    report.final = _final(state)
    if not scan.counts.get("all"):
        report.missing.append("no events could be read: this run has no recorded history")
    return report


def _tests_passed(verdict: dict[str, Any]) -> int | None:
    for check in verdict.get("checks") or []:
        if isinstance(check, dict) and check.get("name") == "tests":
            m = _TESTS.search(str(check.get("summary", "")))
            return int(m.group(1)) if m else None
    return None


def _timeline(state: dict[str, Any], scan: Scan) -> list[dict[str, Any]]:
    """Every verdict's worst error over tolerance per comparison, in order (from the fold), with test counts.
    Past TIMELINE_POINTS verdicts every k-th is kept (and the last): more points than pixels show nothing more."""
    tests: dict[tuple[Any, Any], int | None] = {}
    by_shift: dict[Any, int | None] = {}  # a long run knows only each shift's last count: shown for the shift
    for (kind, shift), event in scan.last.items():
        if kind == "verify.finished":
            by_shift[shift] = tests[(shift, event["data"].get("turn"))] = _tests_passed(event["data"])
    for event in scan.turns:
        if event.get("type") == "verify.finished":
            tests[(event.get("shift"), event["data"].get("turn"))] = _tests_passed(event["data"])
    metrics = [m for m in state.get("metrics") or [] if isinstance(m, dict)]
    step = max(1, len(metrics) // TIMELINE_POINTS)
    picked = metrics[::step] + ([metrics[-1]] if metrics and (len(metrics) - 1) % step else [])
    out = []
    for m in picked:
        values = m.get("values") if isinstance(m.get("values"), dict) else {}
        key = (m.get("shift"), m.get("turn"))
        out.append({"label": f"s{m.get('shift')}t{m.get('turn')}", "shift": m.get("shift"), "turn": m.get("turn"),
                    "values": values, "tests": tests.get(key, by_shift.get(m.get("shift")))})
    return out


def _start_gap(state: dict[str, Any]) -> dict[str, float]:
    """The gap before the agent's first change: the baseline the fold kept from the preflight, if one ran."""
    values = (state.get("baseline") or {}).get("metrics") or {}
    return {k: float(v) for k, v in values.items() if isinstance(v, (int, float))} if isinstance(values, dict) else {}


def _turn_rows(scan: Scan, run_dir: Path) -> list[Row]:
    rows: dict[tuple[int, int], Row] = {}
    starts: dict[tuple[int, int], float | None] = {}

    def row(shift: int, turn: int) -> Row:
        return rows.setdefault((shift, turn), Row(shift, turn))
    for event in scan.turns:
        kind, shift, d = event.get("type"), event.get("shift"), event["data"]
        if not isinstance(shift, int):
            continue
        turn = d.get("turn") if isinstance(d.get("turn"), int) else None
        if kind == "agent.started" and turn is not None:
            r = row(shift, turn)
            r.started = event.get("ts")
            starts[(shift, turn)] = ts_seconds(event.get("ts"))
        elif kind == "agent.stopped" and turn is not None:
            r = row(shift, turn)
            began, now = starts.get((shift, turn)), ts_seconds(event.get("ts"))
            r.duration_s = now - began if began is not None and now is not None else None
            claim = d.get("claim") if isinstance(d.get("claim"), dict) else None
            r.ended = f"{d.get('reason', '?')}" + (f", claims {claim.get('status')}" if claim else "")
            r.cost_usd += float(d.get("cost_usd") or 0.0)
            usage = d.get("usage") if isinstance(d.get("usage"), dict) else {}
            r.tokens = sum(int(v) for k, v in usage.items() if k.endswith("tokens") and isinstance(v, int)) or None
            r.context = d.get("context_tokens") if isinstance(d.get("context_tokens"), int) else None
        elif kind == "verify.finished" and turn is not None:
            r = row(shift, turn)
            r.verdict, r.passed = str(d.get("summary", ""))[:300], bool(d.get("passed"))
        elif kind == "commit.created" and turn is not None and d.get("sha"):
            row(shift, turn).commits.append(str(d["sha"]))
        elif kind == "shift.ended":
            last = max((k for k in rows if k[0] == shift), default=None)
            if last is not None:
                rows[last].ended += f"; shift ended: {d.get('reason', '?')}"
    if not rows:
        rows = {(int(p.name), 0): Row(int(p.name), None, ended="(no events; shift folder only)")
                for p in sorted((run_dir / "shifts").glob("*")) if p.name.isdigit()}
    return [rows[k] for k in sorted(rows)]


def _shift_rows(state: dict[str, Any], scan: Scan) -> list[Row]:
    out = []
    for s in state.get("shifts") or []:
        n = s.get("n")
        began, ended = ts_seconds(s.get("started")), ts_seconds(s.get("ended"))
        r = Row(n, None, s.get("started"), ended - began if began and ended else None,
                str(s.get("end_reason") or ""), passed=None, commits=[c for c in s.get("commits") or [] if c],
                cost_usd=float(s.get("cost_usd") or 0.0))
        verdict = scan.last.get(("verify.finished", n))
        if verdict:
            r.verdict, r.passed = str(verdict["data"].get("summary", ""))[:300], bool(verdict["data"].get("passed"))
        stop = scan.last.get(("agent.stopped", n))
        if stop:
            usage = stop["data"].get("usage") if isinstance(stop["data"].get("usage"), dict) else {}
            r.tokens = sum(int(v) for k, v in usage.items() if k.endswith("tokens") and isinstance(v, int)) or None
            ctx = stop["data"].get("context_tokens")
            r.context = ctx if isinstance(ctx, int) else None
        out.append(r)
    return out


def _diff_sizes(report: Report) -> None:
    """`+added -removed` per commit from the workspace's git, in one `git log` call; absent git: a note."""
    shas = [c for r in report.rows for c in r.commits]
    ws = report.state.get("workspace")
    if not shas:
        return
    from nightshift.supervisor.gitguard import NO_DIFF_PROGRAMS, run_git
    try:
        out = run_git(Path(ws), "log", *NO_DIFF_PROGRAMS, "--no-walk=unsorted", "--format=@%H", "--shortstat",
                      *shas[-2000:], timeout=30) if ws else None
    except OSError:
        out = None
    if out is None or out.returncode != 0:
        report.missing.append("diff sizes unknown: the workspace's git history is not here")
        return
    sizes, sha = {}, None
    for line in out.stdout.splitlines():
        if line.startswith("@"):
            sha = line[1:]
            sizes[sha] = "+0 -0"
        elif sha and "changed" in line:
            plus = re.search(r"(\d+) insertion", line)
            minus = re.search(r"(\d+) deletion", line)
            sizes[sha] = f"+{plus.group(1) if plus else 0} -{minus.group(1) if minus else 0}"
    for r in report.rows:
        r.diff = ", ".join(sizes.get(c, "?") for c in r.commits)


def failed_approaches(workspace: str | None) -> tuple[list[str], str]:
    """The bullets of CHANGELOG.md's "Failed approaches" section, or why there are none."""
    if not workspace:
        return [], "the workspace is unknown (no run.created event)"
    path = Path(workspace) / "CHANGELOG.md"
    try:
        text = untrusted.read_text(path.parent, path.name)
    except untrusted.Untrusted as exc:
        return [], str(exc)
    except OSError:
        return [], f"{path} is not here (the report was built from the run directory alone)"
    m = re.search(r"^#+\s*Failed approaches\s*$(.*?)(?=^#{1,2}\s|\Z)", text, re.M | re.S | re.I)
    if not m:
        return [], "CHANGELOG.md has no 'Failed approaches' section"
    items, current = [], ""
    for line in m.group(1).splitlines():
        if re.match(r"^\s*[-*]\s+", line):
            if current:
                items.append(current)
            current = re.sub(r"^\s*[-*]\s+", "", line).strip()
        elif line.strip() and current:
            current += " " + line.strip()
    if current:
        items.append(current)
    items = [i for i in items if not i.lower().startswith("(none yet")]
    return [_with_shift(Path(workspace), i) for i in items], "" if items else "none recorded in CHANGELOG.md"


def _with_shift(workspace: Path, item: str) -> str:
    """Prefix the shift that recorded ``item``: the first commit adding its text (nightshift's commit messages
    name the shift). Without the workspace's git history the item stands alone."""
    from nightshift.supervisor.gitguard import NO_DIFF_PROGRAMS, run_git
    needle = item[:60]
    try:  # guarded: -S would run a textconv the repository names
        out = run_git(Path(workspace), "log", *NO_DIFF_PROGRAMS, "--reverse", "--format=%s", "-S", needle, "--",
                      "CHANGELOG.md", timeout=10)
    except OSError:
        return item
    m = re.search(r"shift (\d+)", out.stdout if out.returncode == 0 else "")
    return f"shift {m.group(1)}: {item}" if m else item


def _judge(report: Report, scan: Scan) -> list[dict[str, Any]]:
    out = []
    events = [e for e in scan.turns if e.get("type") == "verify.finished"] or \
        [e for (k, _), e in sorted(scan.last.items(), key=lambda kv: kv[0][1]) if k == "verify.finished"]
    for event in events:
        record = event["data"].get("judge")
        if isinstance(record, dict):
            out.append({"shift": event.get("shift"), "turn": event["data"].get("turn"), "record": record})
    return out


def _final(state: dict[str, Any]) -> dict[str, Any]:
    from nightshift.supervisor.cli.watch.outcome import DONE, outcome_code, verdict_commit
    verdict = state.get("last_verdict") or {}
    sha = verdict_commit(state)
    judge = verdict.get("judge") if isinstance(verdict.get("judge"), dict) else None
    return {"outcome": state.get("outcome"), "status": state.get("status"), "reason": state.get("finish_reason"),
            "summary": verdict.get("summary"), "passed": verdict.get("passed"), "verified": outcome_code(state) == DONE,
            "sha": sha, "judge": judge, "sandbox": verdict.get("sandbox"),
            "reproduce": f"git checkout {sha} && nightshift compare" if sha else None}
