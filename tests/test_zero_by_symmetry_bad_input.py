"""Issue 35's bad input: a reference whose scale is zero everywhere (an all-zero field, an all-zero table column)
has nothing to derive an absolute tolerance from. init says, one line each, that it needs one and how to give it,
and writes none; `nightshift check` then refuses that comparison in one line (no traceback, exit 1) until the goal
or the user states one. A goal that states an absolute tolerance is used as it is, and nothing is derived. A
held-out reference's derived floor is only a power of ten, with no count of its values (nightshift.toml is the agent's
to read).
"""
from __future__ import annotations

import math
import re

import h5py
import numpy as np
import pytest

from nightshift.supervisor.config.schema import load_config
from tests.fixtures_core import nightshift, require_tool
from tests.fixtures_symmetry import reference_field, write_all


@pytest.fixture
def refs(tmp_path):
    """The symmetric field's references, plus an HDF5 file with an all-zero field beside a live one and a table
    with an all-zero column."""
    require_tool("git")
    root = tmp_path / "ws"
    write_all(root / "reference", reference_field())
    with h5py.File(root / "reference" / "state.h5", "w") as f:
        f["rho"] = 1.0 + reference_field()
        f["momy"] = np.zeros((16, 12))
    x = np.arange(1.0, 41.0)
    np.savetxt(root / "reference" / "spectra.dat", np.column_stack([x, 1 / x, np.zeros_like(x)]), header="1:l 2:TT 3:BB")
    return root


def init(root, goal: str, *extra: str):
    out = nightshift("init", str(root), "--goal", goal, "--reference-dir", "reference", "--agent", "demo", *extra)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    return out.stdout


def test_an_all_zero_field_or_column_is_named_as_needing_an_absolute_tolerance_and_check_refuses_it(refs):
    said = init(refs, "agree to 1e-6 relative")
    needs = [line for line in said.splitlines() if "NEEDS atol" in line]
    assert len(needs) == 2, said
    for line, what in zip(sorted(needs), ("reference/spectra.dat column BB", "reference/state.h5:/momy")):
        assert what + " is zero everywhere" in line and "state one in the goal" in line and "write atol" in line, line
    by_name = {c.name: c for c in load_config(refs).oracle.compare}
    assert by_name["state:momy"].atol == 0 and "BB" not in by_name["spectra"].per_column  # none written for them
    # their neighbours: TT = 1/l has no value zero at float64's precision (written relative everywhere, and said
    # so); rho = 1 + u is exactly 0 at x = -1/2, y = 0 (1 - 1), between values of ~0.1: a floor of 64 ulps of those
    assert by_name["spectra"].per_column["TT"].atol == 0
    assert 0 < by_name["state:rho"].atol < 1e-14
    assert "reference/spectra.dat column TT: atol = 0 (no value is zero at float64's precision: relative everywhere" \
        in said, said
    done = nightshift("check", str(refs), timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    refused = [line for line in done.stdout.splitlines() if line.startswith("FAIL") and "calibration" in line]
    assert len(refused) == 2, done.stdout
    for line, what in zip(sorted(refused), ("spectra BB", "state:momy")):
        assert f"{what}: the reference is zero everywhere" in line and "needs an absolute tolerance" in line, line
        assert "state one in the goal" in line and "atol for it in nightshift.toml" in line, line


def test_a_goal_that_states_an_absolute_tolerance_is_used_as_it_is_and_nothing_is_derived(refs):
    said = init(refs, "agree to 1e-6 relative, 1e-12 absolute")
    assert "NEEDS atol" not in said and "atol derived" not in said, said
    text = (refs / "nightshift.toml").read_text()
    assert "derived:" not in text and "per_column" not in text and "NEEDS" not in text, text
    oracle = load_config(refs).oracle
    assert {c.atol for c in oracle.compare} == {1e-12} and not any(c.per_column for c in oracle.compare)


def test_a_goal_that_states_zero_absolute_is_obeyed(refs):
    init(refs, "agree to 1e-6 relative and 0 absolute")
    assert {c.atol for c in load_config(refs).oracle.compare} == {0.0}
    assert "derived:" not in (refs / "nightshift.toml").read_text()


def test_a_held_out_references_derived_floor_is_only_its_power_of_ten(refs):
    init(refs, "agree to 1e-6 relative", "--holdout", "u")
    text = (refs / "nightshift.toml").read_text()
    block = text[text.index('name = "u"'):].split("[[oracle.compare]]")[0]
    assert "heldout = true" in block, block
    [line] = [one for one in block.splitlines() if one.startswith("atol = ")]
    atol = float(re.match(r"atol = (\S+)", line).group(1))
    u = np.abs(reference_field())
    beside = float(u[[3, 5, 11, 13]].max())  # the largest value beside the two rows zero by symmetry
    floor = 64 * float(np.finfo(np.float64).eps) * beside
    assert atol == 10.0 ** math.floor(math.log10(floor)) and "rounded down to a power of ten" in line, line
    assert f"{beside:.3g}" not in block and f"{floor:.3g}" not in block  # no figure of the held-out answer
    assert not re.search(r"\d+ of \d+ values", block), block  # nor its counts


def test_a_big_reference_is_measured_on_a_sample_and_called_zero_only_when_it_all_is(tmp_path):
    """init reads samples of big files (bench/bench_init.py): the comment says so, the sampled RMS is the data's
    own to a few percent, and a field whose sampled slabs are all zero but which is not is never called zero."""
    require_tool("git")
    root = tmp_path / "ws"
    (root / "reference").mkdir(parents=True)
    rng = np.random.default_rng(5)
    sparse = np.zeros((4000, 64))
    sparse[1234, 7] = 3.0  # between the sampled slabs: only a read of all of it finds it
    np.save(root / "reference" / "sparse.npy", sparse)
    np.save(root / "reference" / "empty.npy", np.zeros((4000, 64)))
    x = np.arange(1.0, 60001.0)
    wave = np.sin(x / 50.0) * (1 + 0.01 * rng.random(len(x)))
    np.savetxt(root / "reference" / "wave.dat", np.column_stack([x, wave]), header="1:t 2:w", fmt="%.17g")
    assert (root / "reference" / "wave.dat").stat().st_size > 1 << 20  # sampled, not read whole
    said = init(root, "agree to 1e-6 relative")
    by_name = {c.name: c for c in load_config(root).oracle.compare}
    eps = float(np.finfo(np.float64).eps)
    # the sample saw only zeros, the whole read found the 3.0: the floor is its round-off (a zero row may be missed)
    assert by_name["sparse"].atol == float(f"{64 * eps * 3.0:.3g}"), said
    assert "reference/sparse.npy is zero everywhere" not in said and "reference/empty.npy is zero everywhere" in said
    text = (root / "nightshift.toml").read_text()
    [line] = [one for one in text.splitlines() if one.startswith('per_column."w"')]
    assert re.search(r"the round-off of the largest value: a sample of \d+ values may miss a row zero by symmetry", line), line
    atol = by_name["wave"].per_column["w"].atol
    assert 64 * eps * 0.99 <= atol <= 64 * eps * 1.02, line  # 64 ulps of the largest value the sample holds
    # it changes sign between samples, away from any round-off: compared relatively there, and how to loosen is said
    assert "changes sign" in line and "loosen with an atol or a scale expression" in line, line


@pytest.mark.parametrize("value,words", [("-1", "greater than or equal to 0, got -1"),
                                         ('"tight"', "a valid number, unable to parse string as a number, got 'tight'")])
def test_a_bad_per_column_atol_is_named_with_its_key_and_line(refs, value, words):
    init(refs, "agree to 1e-6 relative")
    toml = refs / "nightshift.toml"
    lines = toml.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('per_column."TT"'))
    lines[at] = f'per_column."TT" = {{ atol = {value} }}'
    toml.write_text("\n".join(lines) + "\n")
    done = nightshift("compare", str(refs))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("nightshift compare: ") and line.endswith(
        f"nightshift.toml line {at + 1}: oracle.compare[{_index_of(refs, 'spectra')}].per_column.TT.atol input should "
        f"be {words}"), line


def _index_of(root, name: str) -> int:
    import tomllib
    text = (root / "nightshift.toml").read_text().replace("atol = -1", "atol = 1").replace('atol = "tight"', "atol = 1")
    return [b["name"] for b in tomllib.loads(text)["oracle"]["compare"]].index(name)


def test_a_held_out_fields_region_under_its_floor_is_named_on_checks_screen_only(refs, tmp_path):
    """The calibration names where the derived floor dominates (the row zero by symmetry); for a held-out field its
    decades and stretch of x are figures of the held-out answer: shown on `nightshift check`'s screen only (a Line's
    check_only), never in the text a run records."""
    from nightshift.supervisor.cli.preflight.lines import PreflightContext
    from nightshift.supervisor.cli.preflight.oracle import calibration_lines

    init(refs, "agree to 1e-6 relative", "--holdout", "u")
    ctx = PreflightContext(workspace=refs, out_dir=tmp_path / "out", config=load_config(refs))
    lines = [line for line in calibration_lines(ctx) if line.status == "note"]
    held = [line for line in lines if line.text.startswith("held-out u:")]
    assert len(held) == 1 and held[0].status == "note", [(line.text, line.check_only) for line in lines]
    assert "|reference| from" not in held[0].text and "on this screen only" in held[0].text, held[0].text
    assert held[0].check_only.startswith(" u: |reference| from 1e-16 to 1e-15"), held[0].check_only
    visible = [line for line in lines if not line.text.startswith("held-out")]
    assert visible and all("|reference| from" in line.text and not line.check_only for line in visible), visible
