"""The TUI's plain parts: formatting, the defensive oracle-report reader, the plot, and the entry point's
refusal to draw without a terminal."""
from __future__ import annotations

import json

from nightshift.tui import fmt
from nightshift.tui.app import main
from nightshift.tui.oracle_report import history, load_report, rows_from_report
from nightshift.tui.widgets.oracle_plot import plot_text


def test_ages_costs_and_figures():
    assert [fmt.age(s) for s in (None, 5, 300, 7200, 3 * 86400)] == ["-", "5s", "5m", "2h", "3d"]
    assert fmt.cost(0) == "$0" and fmt.cost(0.0123) == "$0.012" and fmt.cost(12.5) == "$12.50"
    assert fmt.metric(None) == "-" and fmt.metric(float("inf")) == "inf" and fmt.metric(0.5) == "0.5"
    assert fmt.sparkline([100.0, 10.0, 1.0, None]) == "█▅▁ "  # log scale: 10 is halfway


def test_report_reader_takes_other_shapes_and_never_raises(tmp_path):
    rows = rows_from_report({"comparisons": {"C_l": {"passed": False, "columns": {"TT": {"max_rel": 2e-3, "ok": False}}},
                                             "broken": {"error": "candidate out/x.dat is missing"}}})
    assert [(r.comparison, r.column, r.passed) for r in rows] == [("C_l", "TT", False), ("broken", "-", None)]
    assert rows[1].note == "candidate out/x.dat is missing"
    bad = tmp_path / "oracle.json"
    bad.write_text("{not json")
    assert load_report(bad)[0] == [] and "unreadable" in load_report(bad)[1]
    assert load_report(tmp_path / "absent.json")[1].startswith("no oracle report")
    assert rows_from_report(["not", "a", "report"]) == [] and rows_from_report(None) == []
    bad.write_text(json.dumps({"comparisons": []}))
    assert load_report(bad) == ([], "the oracle report has no comparisons")


def test_history_and_plot_mark_the_tolerance():
    series = history([{"metric": 30.0, "values": {"a": 30.0, "b": {"metric": 2.0}}},
                      {"metric": 0.5, "values": {"a": 0.5, "b": {"metric": 0.2}}},
                      {"metric": None, "values": {}}])
    assert series == {"a": [(0, 30.0), (1, 0.5)], "b": [(0, 2.0), (1, 0.2)], "all": [(2, None)]}
    text = plot_text(series, 60, 12).plain
    assert "tol 1" in text and "a=a" in text and "b=b" in text
    assert plot_text({}, 60, 12).plain == "no oracle history yet"


def test_main_without_a_terminal_says_what_to_use(capsys):
    assert main([]) == 2
    assert "needs a terminal" in capsys.readouterr().err


def test_a_table_is_one_row_by_its_worst_column_and_every_column_when_asked():
    report = {"comparisons": [{"name": "conv", "passed": False, "rtol": 1e-3, "columns": [
        {"column": "aerr", "max_rel": 5e-4, "passed": True, "failing": 0, "points": 10},
        {"column": "rerr", "max_rel": 2e-2, "passed": False, "failing": 3, "points": 10},
        {"column": "aerr", "max_rel": 1e-4, "passed": True, "failing": 0, "points": 10}]}]}
    one = rows_from_report(report)
    assert [(r.column, r.passed, r.failing, r.points) for r in one] == [("rerr (worst of 3)", False, 3, 30)]
    assert [r.column for r in rows_from_report(report, columns=True)] == ["aerr", "rerr", "aerr"]
