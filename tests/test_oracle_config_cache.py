"""`nightshift compare` validates nightshift.toml in full once per version of the file, then reads the validated
[oracle] section back without loading pydantic (supervisor/config/oracle_view.py): the same verdict, every
edit validated again (bad input still gets its one line), and a cache entry that does not match is never used."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures_oracle import perturb, workspace_with_oracle
from tests.test_oracle_cli import ORACLE, REF

# The user's own command, run as a user runs it; prints whether pydantic was loaded, after the report.
COMPARE = ("import sys, runpy; sys.argv = ['nightshift', 'compare', sys.argv[1], '--json']\n"
           "try:\n    runpy.run_module('nightshift.supervisor.cli.main', run_name='__main__')\n"
           "except SystemExit as exc:\n    code = exc.code\n"
           "print('PYDANTIC' if 'pydantic' in sys.modules else 'NO-PYDANTIC', code)")


def compare(ws: Path, cache: Path) -> tuple[dict | None, bool, int, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    proc = subprocess.run([sys.executable, "-c", COMPARE, str(ws)], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parent.parent)
    body, _, last = proc.stdout.rstrip().rpartition("\n")
    loaded, code = last.split()
    return (json.loads(body) if body.strip() else None), loaded == "PYDANTIC", int(code), proc.stderr


def without_timings(report: dict) -> dict:
    return {k: v for k, v in report.items() if not k.endswith("_seconds")}


def test_the_second_compare_of_the_same_file_skips_pydantic_with_the_same_verdict(tmp_path):
    ws = workspace_with_oracle(tmp_path / "ws", ORACLE.format(rtol=1e-2), REF, perturb(REF, 1e-3))
    first, loaded_first, code_first, _ = compare(ws, tmp_path / "cache")
    second, loaded_second, code_second, _ = compare(ws, tmp_path / "cache")
    assert loaded_first and not loaded_second  # validated once, then read back
    assert code_first == code_second == 0 and without_timings(first) == without_timings(second)
    kept = list((tmp_path / "cache" / "nightshift" / "oracle-config").glob("*.json"))
    assert len(kept) == 1 and oct(kept[0].stat().st_mode & 0o777) == "0o600"


def test_an_edit_is_validated_again_never_answered_from_the_cache(tmp_path):
    ws = workspace_with_oracle(tmp_path / "ws", ORACLE.format(rtol=1e-2), REF, perturb(REF, 1e-3))
    compare(ws, tmp_path / "cache")
    toml = ws / "nightshift.toml"
    toml.write_text(toml.read_text().replace("rtol = 0.01", "rtol = 1e-5"))  # tighter: now it fails
    report, loaded, code, _ = compare(ws, tmp_path / "cache")
    assert loaded and code == 1 and report["passed"] is False
    toml.write_text(toml.read_text().replace("rtol = 1e-5", "rtol = -1"))  # bad input
    report, loaded, code, err = compare(ws, tmp_path / "cache")
    assert report is None and code == 2 and err.count("\n") == 1 and "rtol" in err, err
    compare(ws, tmp_path / "cache")  # asked again: still the one-line error, the bad file is never kept
    assert compare(ws, tmp_path / "cache")[2] == 2


def test_a_cache_entry_that_does_not_match_its_key_is_not_used(tmp_path):
    """An entry whose recorded key differs from its name (edited or copied by hand) is validated over."""
    ws = workspace_with_oracle(tmp_path / "ws", ORACLE.format(rtol=1e-4), REF, perturb(REF, 1e-2))
    assert compare(ws, tmp_path / "cache")[2] == 1
    entry = next((tmp_path / "cache" / "nightshift" / "oracle-config").glob("*.json"))
    forged = json.loads(entry.read_text())
    forged["oracle"]["compare"][0]["rtol"] = 1.0  # everything would pass
    forged["key"] = "0" * 64
    entry.write_text(json.dumps(forged))
    report, loaded, code, _ = compare(ws, tmp_path / "cache")
    assert loaded and code == 1 and report["passed"] is False
