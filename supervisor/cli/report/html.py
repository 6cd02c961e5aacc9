"""The report as one self-contained HTML page: inline CSS, the timeline as a data: PNG, no script, nothing
fetched from the network, so it opens the same on a laptop without access to the cluster.

Everything shown is escaped: verdict lines, CHANGELOG text and judge evidence are written by the agent.
"""
from __future__ import annotations

from html import escape
from typing import Any

from nightshift.supervisor.cli.report.lanes import lanes_html
from nightshift.supervisor.cli.report.data import Report, Row
from nightshift.supervisor.cli.watch.outcome import judge_words
from nightshift.supervisor.config.judge import NO_JUDGE

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.15em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
.verdict{font-size:1.2em;padding:.6em 1em;border-radius:6px;margin:1em 0}
.ok{background:#e6f4ea;border:1px solid #34a853} .bad{background:#fce8e6;border:1px solid #d93025}
.weak{background:#fef7e0;border:1px solid #f9ab00}
.open{background:#fef7e0;border:1px solid #f9ab00}
table{border-collapse:collapse;font-size:.85em;width:100%} th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f5f5f5} td.num{text-align:right;font-variant-numeric:tabular-nums} tr.pass td.v{color:#188038} tr.fail td.v{color:#c5221f}
code{background:#f5f5f5;padding:1px 4px;border-radius:3px} .muted{color:#777} ul.missing li{color:#b06000}
img.timeline{max-width:100%;border:1px solid #eee}
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f}m" if seconds < 7200 else f"{seconds / 3600:.1f}h"


def verdict_line(report: Report) -> tuple[str, str]:
    """(css class, the one line): the final verdict and the commit it applies to."""
    f = report.final
    sha = (f.get("sha") or "")[:10] or "no commit"
    tier = f.get("sandbox")  # the boundary's tier at the last verdict (sandbox/tier.py); older runs have none
    if f.get("verified") and tier and tier != "full":
        return "weak", (f"VERIFIED DONE at commit {sha}, sandbox: {tier} (weaker than full): "
                        f"{f.get('reason') or f.get('summary')}")
    if f.get("verified"):
        full = ", sandbox: full" if tier else ""
        return "ok", f"VERIFIED DONE at commit {sha}{full}: {f.get('reason') or f.get('summary')}"
    if f.get("outcome"):
        return "bad", f"ended {str(f['outcome']).upper()} (not verified done) at commit {sha}: {f.get('reason') or ''}"
    last = f.get("summary") or "no verdict yet"
    return "open", f"NOT FINISHED ({f.get('status')}); last verdict at commit {sha}: {last}"


def trust_line(report: Report) -> str:
    """What checked the last verdict beside the oracle and the tests: the judge's words are `status`'s
    (cli/watch/outcome.judge_words), and a run configured without one says so plainly."""
    if report.judge_off:
        return f"Judge on the last verdict: none ({report.judge_off}): {NO_JUDGE}"
    return f"Judge on the last verdict: {judge_words(report.state)}"


def _row(r: Row, per_turn: bool) -> str:
    cls = "pass" if r.passed else "fail" if r.passed is False else ""
    where = f"{r.shift}" + (f".{r.turn}" if per_turn and r.turn is not None else "")
    shown = r.commits if len(r.commits) <= 3 else r.commits[-1:]  # a long shift: its count and its last commit
    commits = ("" if shown is r.commits else f"{len(r.commits)}, last ") + \
        " ".join(f"<code>{_e(c[:8])}</code>" for c in shown)
    cells = [f"<td>{_e(where)}</td>", f"<td>{_e((r.started or '')[:19].replace('T', ' '))}</td>",
             f"<td class=num>{_dur(r.duration_s)}</td>", f"<td>{_e(r.ended)}</td>", f"<td class=v>{_e(r.verdict)}</td>",
             f"<td>{_e(r.diff)}</td>", f"<td>{commits}</td>", f"<td class=num>${r.cost_usd:.4f}</td>",
             f"<td class=num>{_e(r.tokens if r.tokens is not None else '')}</td>",
             f"<td class=num>{_e(r.context if r.context is not None else '')}</td>"]
    return f"<tr class='{cls}'>{''.join(cells)}</tr>"


def _table(report: Report) -> str:
    if not report.rows:
        return "<p class=muted>No shift has started.</p>"
    head = ("turn" if report.per_turn else "shift")
    note = "" if report.per_turn else (f"<p class=muted>{report.verdicts} verdicts: one row per shift "
                                       "(its last verdict, last stop's tokens and context, total cost).</p>")
    ths = "".join(f"<th>{h}</th>" for h in (head, "start (UTC)", "duration", "why it ended", "verdict", "diff",
                                            "commits", "cost", "tokens", "context"))
    body = "\n".join(_row(r, report.per_turn) for r in report.rows)
    return f"{note}<table id=shifts><thead><tr>{ths}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _list(items: list[str], empty: str, css: str = "") -> str:
    if not items:
        return f"<p class=muted>{_e(empty)}</p>"
    return f"<ul class='{css}'>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"


def _human(report: Report) -> str:
    from nightshift.supervisor.cli.report.human import needed
    asked = needed(report.human)
    handled = [h for h in report.human if h not in asked]
    if asked:
        out = _human_table("human", asked)
    else:
        out = ("<p class=muted>Nothing needed a person: no claims of blocked, nudges, pauses, refusals, breaker trips "
               "or waits for an answer.</p>")
    if handled:  # for the record, under their own heading: nobody had to do anything about them
        out += "\n<h3>What nightshift handled by itself</h3>\n" + _human_table("handled", handled)
    return out


def _human_table(table_id: str, rows: list[dict]) -> str:
    cells = "".join(f"<tr><td>{_e((h['ts'] or '')[:19].replace('T', ' '))}</td><td>{_e(h['shift'] or '')}</td>"
                    f"<td>{_e(h['kind'])}</td><td>{_e(h['text'])}</td></tr>" for h in rows)
    return (f"<table id={table_id}><tr><th>when (UTC)</th><th>shift</th><th>event</th><th>what</th></tr>{cells}"
            "</table>")


def _judge(report: Report) -> str:
    if not report.judge:
        return "<p class=muted>The judge did not run in this run (off, or no claim of done reached it).</p>"
    parts = []
    for j in report.judge:
        rec = j["record"]
        via = {"agent": " (through the agent's CLI)", "api": " (through the API)"}.get(rec.get("via"), "")
        head = f"shift {j['shift']} turn {j['turn']}{via}: "
        if not rec.get("available"):
            parts.append(f"<p>{_e(head)}judge unavailable: {_e(rec.get('error'))} (never counted as a pass)</p>")
            continue
        findings = rec.get("findings") or []
        fails = [f for f in findings if f.get("verdict") != "PASS"]
        parts.append(f"<p>{_e(head)}{len(findings) - len(fails)}/{len(findings)} criteria pass</p>")
        if fails:
            parts.append("<ul>" + "".join(f"<li><b>FAIL</b> {_e(f.get('criterion'))}: {_e(f.get('evidence'))}"
                                          f"{(' Fix: ' + _e(f.get('fix'))) if f.get('fix') else ''}</li>"
                                          for f in fails) + "</ul>")
    return "\n".join(parts)


def render_html(report: Report, png_b64: str | None, no_image_reason: str) -> str:
    from nightshift.supervisor.cli.report.attest import attest_html  # issue #31: the run's signed attestations
    css_class, line = verdict_line(report)
    st = report.state
    image = (f"<img class=timeline id=timeline alt='accuracy timeline' src='data:image/png;base64,{png_b64}'>"
             if png_b64 else f"<p class=muted id=timeline-missing>No timeline: {_e(no_image_reason)}</p>")
    reproduce = report.final.get("reproduce")
    repro = (f"<p>Reproduce the check: <code id=reproduce>{_e(reproduce)}</code> in {_e(st.get('workspace'))}</p>"
             if reproduce else "<p class=muted>No commit to reproduce yet.</p>")
    failed = _list(report.failed_approaches, report.failed_note)
    return f"""<!doctype html>
<html lang=en><head><meta charset=utf-8><title>nightshift report: {_e(report.run_id)}</title>
<style>{CSS}</style></head><body>
<h1>nightshift report: run {_e(report.run_id)}</h1>
<p>{_e(st.get('goal') or '(no goal recorded)')}</p>
<p class=muted>workspace {_e(st.get('workspace'))} &middot; agent {_e(st.get('agent'))} &middot; backend {_e(st.get('backend'))}
&middot; created {_e(st.get('created'))} &middot; {st.get('seq') or report.counts.get('all', 0)} events</p>
<div class='verdict {css_class}' id=verdict>{_e(line)}</div>
<p>Last verdict: {_e(report.final.get('summary') or '-')}<br><span id=trust>{_e(trust_line(report))}</span></p>
{repro}
{attest_html(report.run_dir)}
{('<h2>What is missing from this report</h2>' + _list(report.missing, '', 'missing')) if report.missing else ''}
{lanes_html(report.run_dir)}
<h2>Accuracy timeline</h2>
{image}
<h2>Shifts and turns</h2>
{_table(report)}
<h2>Failed approaches (CHANGELOG.md)</h2>
{failed}
<h2>What needed a person</h2>
{_human(report)}
<h2>Judge</h2>
{_judge(report)}
<h2>Budget</h2>
{_list(report.budget, 'no budget figures')}
<h2>Held-out exam</h2>
{_list(report.heldout_lines, 'no oracle configured')}
</body></html>
"""
