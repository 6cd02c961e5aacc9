"""The boundary after the fact, for an agent nightshift cannot hook (a scripted command agent that cheats): at
the stop after it loosens nightshift.toml, empties a test that has passed and rewrites the Definition of done,
each file is put back, named in the verdict and the push-back, and the run does not end done on that stop.

This is the layer that holds where no namespace can be made, so the test turns the namespace off ([policy]
sandbox = "off", the setting it is about); inside the namespace these writes fail (tests/test_namespace_cheats.py)."""
from __future__ import annotations


from tests.fixtures_core import supervise, workspace  # noqa: F401

TEST = "def test_ok():\n    assert open('check.txt').read().strip() == 'ok'\n"


def test_protected_files_changed_by_a_command_agent_are_restored_and_named(workspace):
    ws = workspace.path
    (ws / "tests").mkdir()
    (ws / "tests" / "test_ok.py").write_text(TEST)
    plan = (ws / "CLAUDE.md").read_text()
    cheat_plan = plan.replace("## Definition of done", "## Definition of done\n- anything goes\n", 1)
    workspace.configure({
        "s1t1": [["write", "check.txt", "ok"]],                                     # passes, does not claim
        "s1t2": [["write", "tests/test_ok.py", "def test_ok():\n    pass\n"],        # guts a passed test
                 ["append", "nightshift.toml", "\n# loosened by the agent\n"],      # edits the config
                 ["write", "CLAUDE.md", cheat_plan],                                # rewrites the Definition of done
                 ["claim", "done", "all good"]],
        "s1t3": [["claim", "done", "all good, really"]],
    }, backend="local", test_command="python3 -m pytest -q tests", extra='[policy]\nsandbox = "off"\n')
    config_before = (ws / "nightshift.toml").read_text()
    run = workspace.create_run()
    out = supervise(run)
    assert out.returncode == 0, out.stderr[-2000:]
    verdicts = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    assert [v["passed"] for v in verdicts] == [True, False, True]
    boundary = next(c for c in verdicts[1]["checks"] if c["name"] == "boundary")
    text = "\n".join(boundary["lines"])
    assert not boundary["passed"] and "tests/test_ok.py was changed" in text and "nightshift.toml was changed" in text
    assert "Definition of done" in text
    assert (ws / "tests" / "test_ok.py").read_text() == TEST
    assert (ws / "nightshift.toml").read_text() == config_before
    assert (ws / "CLAUDE.md").read_text().count("anything goes") == 0
    pushback = run.turn_file(1, 3, "prompt.md").read_text()
    assert "tests/test_ok.py was changed" in pushback and "restored" in pushback
    finished = workspace.events(run)[-1]
    assert finished["type"] == "run.finished" and finished["data"]["outcome"] == "done"


def _ticked(plan: str) -> str:
    """CLAUDE.md with every box of its Definition of done ticked, as a model reporting progress does."""
    start = plan.index("## Definition of done")
    end = plan.index("\n## ", start)
    return plan[:start] + plan[start:end].replace("- [ ]", "- [x]") + plan[end:]


def test_an_agent_that_ticks_the_definition_of_done_ends_done(workspace):
    ws = workspace.path
    ticked = _ticked((ws / "CLAUDE.md").read_text())
    assert ticked.count("- [x]") >= 4  # the template's boxes, all ticked
    workspace.configure({"s1t1": [["write", "check.txt", "ok"], ["write", "CLAUDE.md", ticked],
                                  ["claim", "done", "all four hold"]]}, backend="local")
    run = workspace.create_run()
    out = supervise(run)
    assert out.returncode == 0, out.stderr[-2000:]
    verdicts = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    assert [v["passed"] for v in verdicts] == [True]
    boundary = next(c for c in verdicts[0]["checks"] if c["name"] == "boundary")
    assert boundary["passed"] and not boundary["lines"]
    assert (ws / "CLAUDE.md").read_text() == ticked  # the agent's ticks stay
    assert workspace.events(run)[-1]["data"]["outcome"] == "done"


def test_an_agent_that_ticks_a_box_and_changes_its_words_is_restored_and_named(workspace):
    ws = workspace.path
    plan = (ws / "CLAUDE.md").read_text()
    box = "- [ ] The oracle passes: every comparison"
    assert box in plan
    cheat = _ticked(plan).replace("- [x] The oracle passes: every comparison", "- [x] The oracle mostly passes: any comparison")
    workspace.configure({"s1t1": [["write", "check.txt", "ok"], ["write", "CLAUDE.md", cheat],
                                  ["claim", "done", "all good"]],
                         "s1t2": [["claim", "done", "all good, really"]]}, backend="local")
    run = workspace.create_run()
    out = supervise(run)
    assert out.returncode == 0, out.stderr[-2000:]
    verdicts = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    assert [v["passed"] for v in verdicts] == [False, True]
    boundary = next(c for c in verdicts[0]["checks"] if c["name"] == "boundary")
    text = "\n".join(boundary["lines"])
    assert not boundary["passed"] and "Definition of done\" was changed by the agent and has been restored" in text
    assert "The oracle mostly passes: any comparison" in text  # the changed line is named
    assert (ws / "CLAUDE.md").read_text() == plan and "mostly" not in (ws / "CLAUDE.md").read_text()
    assert "Definition of done" in run.turn_file(1, 2, "prompt.md").read_text()
    assert workspace.events(run)[-1]["data"]["outcome"] == "done"
