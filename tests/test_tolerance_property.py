"""Issue 44's property, over generated data: the floor init derives (cli/init/scales.py and roundoff.py, reading the
files as init does) and the oracle's own comparison and calibration (verify/oracle) on

- spectra and power laws over 3 to 30 decades (no value is zero at its precision: relative everywhere);
- columns that change sign with samples zero by symmetry (sin(pi x) at integer x, round-off 1e-16 between values of
  order one) and envelopes over many decades;
- fields with a quiet region of exact zeros, a pulse over many decades and rows zero by symmetry;
- all-zero fields and references that are NaN somewhere (bad input, named).

Both ways each time: an honest candidate computed another way (round-off of its own where the reference is zero,
a relative error under the tolerance elsewhere) passes; a 1% error, or 3x the relative tolerance, at any point
where the reference is above its round-off fails, in every decade; a candidate that zeroes small values fails; a
stated atol that hides more than a tenth of the non-zero points is refused by the calibration, naming the share.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from nightshift.supervisor.cli.init.scales import column_scales, field_scale
from nightshift.supervisor.config.oracle import CompareConfig, ColumnOverride
from nightshift.supervisor.verify.oracle.calibrate import calibrate
from nightshift.supervisor.verify.oracle.calibrate_field import calibrate_field
from nightshift.supervisor.verify.oracle.compare import compare_tables
from nightshift.supervisor.verify.oracle.field_compare import compare_fields
from nightshift.supervisor.verify.oracle.field import open_field
from nightshift.supervisor.verify.oracle.table import Table

EPS = float(np.finfo(np.float64).eps)
SEEDS = range(12)


def table_config(rtol: float, atol: float) -> CompareConfig:
    return CompareConfig(name="t", candidate="out/t.dat", reference="reference/t.dat", x="x", columns=["y"],
                         rtol=rtol, per_column={"y": ColumnOverride(atol=atol)})


def derived_column_floor(tmp_path, x: np.ndarray, y: np.ndarray):
    path = tmp_path / "t.dat"
    np.savetxt(path, np.column_stack([x, y]), header="1:x 2:y", fmt="%.17g")
    return column_scales(path, None, ["y"])["y"]


def compared(cfg: CompareConfig, x: np.ndarray, cand: np.ndarray, ref: np.ndarray) -> dict:
    return compare_tables(cfg, Table("c", ["x", "y"], [x, cand]), Table("r", ["x", "y"], [x, ref]))


def spectrum(seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """A broken power law over 3 to 30 decades of its values, on a log grid; and rtol."""
    rng = np.random.default_rng(seed)
    decades = rng.uniform(3, 30)
    x = np.logspace(-4, 2, int(rng.integers(200, 2000)))
    slope = decades / 6  # over the six decades of x
    knee = 10 ** rng.uniform(-3, 1)
    y = 10 ** rng.uniform(-5, 8) * (x / knee) ** rng.uniform(-1, 1) / (1 + (x / knee) ** slope)
    return x, y, float(10 ** rng.uniform(-6, -2))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_spectrum_over_many_decades_is_compared_relatively_in_every_decade(tmp_path, seed):
    x, y, rtol = spectrum(seed)
    floor = derived_column_floor(tmp_path, x, y)
    assert floor.atol == 0 and floor.zeros == 0 and floor.decades > 2, floor  # nothing is round-off in a spectrum
    cfg = table_config(rtol, floor.atol)
    rng = np.random.default_rng(100 + seed)
    honest = y * (1 + rtol * rng.uniform(-0.9, 0.9, y.size))
    assert compared(cfg, x, honest, y)["passed"]
    decade = np.floor(np.log10(y))
    for d in np.unique(decade):  # 3x the tolerance at one point of every decade: caught there
        at = int(rng.choice(np.flatnonzero(decade == d)))
        moved = honest.copy()
        moved[at] = y[at] * (1 + 3 * rtol)
        found = compared(cfg, x, moved, y)
        assert not found["passed"] and found["columns"][0]["row_worst"] == at, (d, found["columns"][0])
    found = calibrate(cfg, Table("r", ["x", "y"], [x, y]))
    assert found.ok and not found.notes, (found.problems, found.notes)


def signed(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """sin(pi x) under an envelope over several decades, x on a grid that holds integers exactly (zero by symmetry
    there, to round-off); the same computed another way (cos(pi (x - 1/2))); rtol."""
    rng = np.random.default_rng(seed)
    x = np.arange(0, int(rng.integers(8, 40)) * 16 + 1) / 16.0
    envelope = np.exp(-x * rng.uniform(0.1, 0.6)) * 10 ** rng.uniform(-3, 3)
    return x, np.sin(np.pi * x) * envelope, np.cos(np.pi * (x - 0.5)) * envelope, float(10 ** rng.uniform(-7, -3))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_column_zero_by_symmetry_gets_a_floor_at_its_round_off_and_a_1_percent_error_fails_everywhere_else(
        tmp_path, seed):
    x, y, other, rtol = signed(seed)
    floor = derived_column_floor(tmp_path, x, y)
    zeros = np.flatnonzero(x == np.round(x))
    beside = max(np.abs(y[max(i - 1, 0):i + 2]).max() for i in zeros)
    spread = float(np.abs(y[zeros]).max())  # sin(n pi) is n pi eps or so: the round-off the data shows
    assert floor.zeros == len(zeros) and floor.atol == pytest.approx(max(4 * spread, 64 * EPS * beside)), floor
    assert floor.atol < 1e-11 * beside and floor.crossings == 0, floor  # its sign changes are all at its zeros
    cfg = table_config(rtol, float(f"{floor.atol:.3g}"))
    assert compared(cfg, x, other, y)["passed"]  # the other computation's round-off at the zeros passes
    assert not compared(table_config(rtol, 0.0), x, other, y)["passed"]  # and would not on rtol alone
    clear = np.flatnonzero(np.abs(y) > 1e-9 * beside)  # above the zeros' round-off by far, however deep the envelope
    assert len(clear) > len(x) // 2
    relative = np.flatnonzero(2 * rtol * np.abs(y) > cfg.per_column["y"].atol)  # where atol does not dominate
    for at in np.random.default_rng(seed).choice(clear, 20):  # 1%: caught wherever the value is above round-off
        moved = other.copy()
        moved[at] *= 1.01
        found = compared(cfg, x, moved, y)
        assert not found["passed"] and found["columns"][0]["row_worst"] == at, at
    for at in np.random.default_rng(seed).choice(relative, 20):  # 3x rtol: wherever atol does not dominate
        moved = other.copy()
        moved[at] *= 1 + 3 * rtol
        found = compared(cfg, x, moved, y)
        assert not found["passed"] and found["columns"][0]["row_worst"] == at, at
    found = calibrate(cfg, Table("r", ["x", "y"], [x, y]))
    assert found.ok, found.problems  # init's own floor is never refused
    hidden = len(x) - len(relative) - int(np.sum(y[zeros] == 0))  # the rest, exact zeros aside, is named
    assert len(found.notes) == (1 if hidden else 0), found.notes
    if hidden:
        assert f" {hidden} of {len(x)} points " in found.notes[0] and (
            "zero at the data's precision" in found.notes[0] or "the data's own round-off floor" in found.notes[0]), \
            found.notes


def field_with_quiet_region(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A pulse exp(-r^2/w^2) (many decades of tail) cut to exact zero outside a disc, times cos(pi x) (rows zero by
    symmetry); and the same computed another way."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(24, 64))
    x = np.linspace(-1.5, 1.5, 2 * n + 1)  # x = +-0.5 on the grid: cos(pi x) is round-off there
    y = np.linspace(-1, 1, n)
    width = rng.uniform(0.15, 0.4)
    r2 = x[:, None] ** 2 + y[None, :] ** 2
    quiet = r2 > rng.uniform(0.8, 1.2)
    ref = np.where(quiet, 0.0, np.exp(-r2 / width ** 2) * np.cos(np.pi * x)[:, None])
    other = np.where(quiet, 0.0, np.exp(-x[:, None] ** 2 / width ** 2) * np.exp(-y[None, :] ** 2 / width ** 2)
                     * np.sin(np.pi * (x + 0.5))[:, None])
    return ref, other


def field_config(rtol: float, atol: float) -> CompareConfig:
    return CompareConfig(name="f", candidate="out/f.npy", reference="reference/f.npy", rtol=rtol, atol=atol)


def fields_compared(tmp_path, cfg: CompareConfig, cand: np.ndarray, ref: np.ndarray) -> dict:
    np.save(tmp_path / "c.npy", cand)
    np.save(tmp_path / "r.npy", ref)
    with open_field(tmp_path / "c.npy", None, "candidate") as c, open_field(tmp_path / "r.npy", None, "reference") as r:
        return compare_fields(cfg, c, r, "f")


@pytest.mark.parametrize("seed", SEEDS)
def test_a_field_with_a_quiet_region_and_rows_zero_by_symmetry_passes_honest_work_and_catches_a_1_percent_error(
        tmp_path, seed):
    ref, other = field_with_quiet_region(seed)
    np.save(tmp_path / "ref.npy", ref)
    floor = field_scale(tmp_path / "ref.npy", None)
    assert 0 < floor.atol <= 1e-11 * np.abs(ref).max(), floor
    rtol = 1e-6
    cfg = field_config(rtol, float(f"{floor.atol:.3g}"))
    assert fields_compared(tmp_path, cfg, other, ref)["passed"]
    size = np.abs(ref).reshape(-1)
    clear = np.flatnonzero(size > 1e-9 * size.max())  # the pulse's tail down to 1e-9 of its peak: relative
    assert len(clear) > size.size // 10
    rng = np.random.default_rng(seed)
    for at in rng.choice(clear, 10):
        moved = other.reshape(-1).copy()
        moved[at] *= 1.01
        found = fields_compared(tmp_path, cfg, moved.reshape(ref.shape), ref)
        assert not found["passed"] and found["row_worst"] == at, at
    zeroed = np.where(np.abs(other) < 1e-3 * size.max(), 0.0, other)  # small values left out: caught
    assert not fields_compared(tmp_path, cfg, zeroed, ref)["passed"]
    found = calibrate_field(cfg, tmp_path / "ref.npy", None)
    assert found.ok, found.problems  # init's own floor is never refused; where it dominates is named in one line
    assert len(found.notes) <= 1 and all("atol dominates there" in note for note in found.notes), found.notes


def test_an_all_zero_field_needs_an_absolute_tolerance_and_a_nan_reference_is_named(tmp_path):
    np.save(tmp_path / "zero.npy", np.zeros((20, 8)))
    floor = field_scale(tmp_path / "zero.npy", None)
    assert floor.zero and floor.values == 160
    found = calibrate_field(field_config(1e-6, 0.0), tmp_path / "zero.npy", None)
    assert any("is zero everywhere" in p and "needs an absolute tolerance" in p for p in found.problems), found
    bad = np.linspace(1.0, 2.0, 160).reshape(20, 8)
    bad[7, 3] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    found = calibrate_field(field_config(1e-6, 0.0), tmp_path / "nan.npy", None)
    assert found.problems == ["f: the reference is itself NaN at index (7, 3) (1 of 160 elements not finite): no "
                              "candidate can match there; fix the reference, or leave those elements out (range)"]
    x = np.arange(1.0, 41.0)
    y = 1 / x
    y[[5, 9]] = np.nan
    found = calibrate(table_config(1e-3, 0.0), Table("r", ["x", "y"], [x, y]))
    assert found.problems == ["t y: the reference is itself NaN at x=6 (2 of 40 points not finite): no candidate can "
                              "match there; fix the reference, or leave those points out (range)"], found.problems


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_a_stated_atol_that_hides_a_tenth_of_the_points_is_refused_naming_the_share_and_a_smaller_one_is_named(seed):
    x, y, rtol = spectrum(seed)
    order = np.sort(np.abs(y))
    for share, refused in ((0.3, True), (0.05, False)):
        atol = float(order[int(share * len(y))]) * rtol * 2  # atol >= 2 rtol |y| below that value: it dominates
        found = calibrate(table_config(rtol, atol), Table("r", ["x", "y"], [x, y]))
        hidden = int(np.sum(3 * rtol * np.abs(y) <= atol + rtol * np.abs(y)))
        said = f"{hidden} of {len(y)} points ({100 * hidden / len(y):.3g}%) cannot fail at 3x rtol ({rtol:g})"
        lines = found.problems if refused else found.notes
        assert len(lines) == 1 and said in lines[0] and "atol dominates there" in lines[0], (found.problems,
                                                                                             found.notes)
        lo = math.floor(math.log10(order[0]))
        assert f"|reference| from 1e{lo:+03d} to " in lines[0], lines[0]
        if refused:
            assert "compared absolutely (more than 10%)" in lines[0] and "lower atol below" in lines[0], lines[0]
        else:
            assert not found.problems, found.problems
