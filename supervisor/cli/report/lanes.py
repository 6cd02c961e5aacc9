"""The report's lanes section, for a fleet's run: each lane's approach, outcome, accuracy over time (worst error
over tolerance at each of its verdicts), the fleet's own check, cost, and the winner with why. Read from the run
directory and the lanes' run directories alone; nothing when the run is not a fleet.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from nightshift.supervisor.fleet.state import held_of, lane_run, lane_rows, load_fleet, shown
from nightshift.supervisor.run.state import load_state

OUTCOMES = {"verified": "verified", "dominated": "dominated", "stopped": "stopped", "retired": "retired (stalled)",
            "cheated": "CAUGHT CHEATING", "failed": "failed the fleet's check", "spent": "budget spent"}


def lanes(run_dir: Path) -> dict[str, Any] | None:
    """{winner, why, rows: [{lane, approach, outcome, history, metric, cost_usd, shift, cheats}]} or None."""
    fleet = load_fleet(run_dir)
    if fleet is None:
        return None
    rows, held = lane_rows(run_dir) or [], held_of(run_dir)  # held-out comparisons: pass or fail only
    for row in rows:
        lane = fleet["lanes"][str(row["lane"])]
        run = lane_run(lane)
        state = load_state(run.root)[0] if run.events.exists() else {}
        row["history"] = [shown(m.get("values"), held) for m in state.get("metrics") or []]
        row["outcome"] = "won" if row["winner"] else OUTCOMES.get(lane["outcome"] or "", lane["outcome"] or "running")
    why = (fleet["decided"] or {}).get("reason") or ("no lane was verified done" if fleet["finished"] else "undecided")
    return {"winner": fleet["winner"], "why": why, "rows": rows}


def _num(value: Any) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.3g}"


def history_text(history: list[Any], most: int = 8) -> str:
    shown = [_num(v) for v in history[-most:]]
    return ("… " if len(history) > most else "") + " → ".join(shown) if shown else "-"


def summary_lines(run_dir: Path) -> list[str]:
    found = lanes(run_dir)
    if not found:
        return []
    out = [f"  lanes: {len(found['rows'])}; winner: " + (f"lane {found['winner']} ({found['why']})" if found["winner"]
                                                          else found["why"])]
    for row in found["rows"]:
        out.append(f"    lane {row['lane']}: {row['approach'] or 'its own choice'}: {row['outcome']}, worst error / "
                   f"tolerance {_num(row['metric'])}, ${row['cost_usd']:.2f}")
    return out


def lanes_html(run_dir: Path) -> str:
    found = lanes(run_dir)
    if not found:
        return ""
    e = html.escape
    head = (f"<p id=lanes-winner>Winner: lane {found['winner']} ({e(found['why'])})</p>" if found["winner"]
            else f"<p id=lanes-winner>No winner: {e(found['why'])}</p>")
    body = "".join(
        f"<tr><td>{row['lane']}</td><td>{e(row['approach'] or 'its own choice')}</td><td>{e(row['outcome'])}</td>"
        f"<td>{e(history_text(row['history']))}</td><td>{_num(row['metric'])}</td><td>{row['shift']}</td>"
        f"<td>{e(row.get('heldout') or '-')}</td><td>${row['cost_usd']:.2f}</td>"
        f"<td>{e('; '.join(row['cheats'][:2]))}</td></tr>" for row in found["rows"])
    return (f"<h2>Lanes</h2>\n{head}\n<table id=lanes><tr><th>lane</th><th>approach</th><th>outcome</th>"
            f"<th>worst error / tolerance over time</th><th>at the end</th><th>shifts</th><th>held-out</th>"
            f"<th>cost</th>"
            f"<th>caught</th></tr>{body}</table>")
