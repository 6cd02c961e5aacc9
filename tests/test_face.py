"""The face shows its verbs (issue 32, item 8): `nightshift --help` lists what a user can ask, and nothing internal."""
from __future__ import annotations

from tests.fixtures_core import nightshift


def test_help_lists_the_verbs_and_hides_the_internal_one():
    out = nightshift("--help")
    assert out.returncode == 0
    assert "run " in out.stdout and "report " in out.stdout and "verify-result" in out.stdout
    assert "SUPPRESS" not in out.stdout and "supervise" not in out.stdout
