"""Shared fixtures: each area's fixtures live in their own module, imported by the tests that use them.

Every test gets a private XDG_STATE_HOME so the user's registry of runs is never touched.
"""
import pytest


@pytest.fixture(autouse=True)
def private_state_home(tmp_path_factory, monkeypatch):
    state = tmp_path_factory.mktemp("xdg-state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state
