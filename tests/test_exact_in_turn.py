"""Who decides whether an exact match was computed: the caller says it (``in_turn``: the agent's own `nightshift
compare` in its turn), the verdict code reads no environment. Outside the turn an unsealed command's exact match is
still refused whatever the environment holds; in the turn it is neither refused nor proof, and the line says its
stop decides; held-out comparisons the caller left out still count as the exam that proves the answers."""
from __future__ import annotations

from types import SimpleNamespace

from nightshift.supervisor.verify.oracle.copies import IN_TURN_EXACT, exact_notes, not_out_of_reach

CFG = SimpleNamespace(clean_candidates=True)


def exact_entry() -> dict:
    return {"name": "result", "reference": "reference/result.dat", "ratio": 0, "error": None, "passed": True}


def test_the_environment_does_not_decide_the_verdict(monkeypatch):
    monkeypatch.setenv("NIGHTSHIFT_NAMESPACE", "1")
    refused = not_out_of_reach(CFG, True, "moved")
    assert refused and "without nightshift's namespace" in refused, refused
    assert not_out_of_reach(CFG, True, "none", in_turn=True) is None
    assert not_out_of_reach(CFG, True, "namespace") is None


def test_in_the_turn_an_exact_match_is_left_to_the_stop():
    shown = [exact_entry()]
    assert exact_notes(shown, shown, True, 1, in_turn=True) == [IN_TURN_EXACT] and shown[0]["exact"]


def test_held_out_comparisons_left_out_are_still_the_exam_to_come():
    shown = [exact_entry()]
    lines = exact_notes(shown, shown, True, 2)
    assert lines[0].startswith("result: matched reference/result.dat bit for bit"), lines
    assert lines[-1].startswith("the held-out exam (2 comparison(s)), evaluated at a claim of done"), lines
