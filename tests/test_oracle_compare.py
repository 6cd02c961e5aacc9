"""The comparison: tolerance modes and per-column overrides, interpolation against analytic functions, the
scale mode for quantities crossing zero, range and coverage, bad input, and the report's numbers checked
against an independent numpy computation."""
from __future__ import annotations

import numpy as np
import pytest

from nightshift.supervisor.verify.oracle.compare import compare_tables
from nightshift.supervisor.config.oracle import CompareConfig
from nightshift.supervisor.verify.oracle.table import OracleInputError, Table
from tests.fixtures_oracle import perturb, spectrum


def table(data: np.ndarray, names=("l", "TT", "EE", "TE")) -> Table:
    return Table("t", list(names[: data.shape[1]]), [data[:, i].copy() for i in range(data.shape[1])])


def cfg(**kw) -> CompareConfig:
    return CompareConfig.model_validate({"name": "cl", "candidate": "c", "reference": "r", "x": "l", **kw})


def two_points(cand: list[float], ref: list[float]):
    x = np.array([1.0, 2.0])
    return table(np.column_stack([x, cand]), ("l", "y")), table(np.column_stack([x, ref]), ("l", "y"))


@pytest.mark.parametrize("mode, rtol, atol, passes", [
    # |d| = 0.015 against |ref| = 1: rel 0.015
    ("sum", 0.01, 0.01, True),      # 0.015 <= 0.01 + 0.01
    ("sum", 0.01, 0.004, False),
    ("either", 0.01, 0.03, True),   # the absolute tolerance alone covers it
    ("either", 0.01, 0.01, False),
    ("both", 0.03, 0.03, True),
    ("both", 0.03, 0.01, False),    # the absolute one fails
    ("either", 0.02, 0.0, True),    # numdiff -a 0 -r 0.02
    ("either", 0.01, 0.0, False),
    ("both", 0.02, 0.0, False),     # a zero absolute tolerance fails any difference
    ("sum", 0.0, 0.02, True),       # atol only
    ("sum", 0.02, 0.0, True),       # rtol only
    ("sum", 0.014, 0.0, False),
])
def test_tolerance_modes(mode, rtol, atol, passes):
    cand, ref = two_points([1.015, 5.0], [1.0, 5.0])
    out = compare_tables(cfg(rtol=rtol, atol=atol, tolerance=mode, columns=["y"]), cand, ref)
    assert out["passed"] is passes
    assert out["columns"][0]["failing"] == (0 if passes else 1)


def test_zero_tolerance_passes_only_exact_values():
    cand, ref = two_points([0.0, 5.0], [0.0, 5.0])
    assert compare_tables(cfg(rtol=0, atol=0), cand, ref)["passed"]
    cand, ref = two_points([1e-300, 5.0], [0.0, 5.0])
    assert compare_tables(cfg(rtol=0.1, atol=0), cand, ref)["ratio"] == np.inf


def test_per_column_override():
    ref = spectrum(100)
    cand = ref.copy()
    cand[:, 3] *= 1.05  # TE off by 5%
    base = cfg(rtol=1e-3)
    out = compare_tables(base, table(cand), table(ref))
    assert [c["passed"] for c in out["columns"]] == [True, True, False]
    loose = cfg(rtol=1e-3, columns=["TT", "EE", "TE"], per_column={"TE": {"rtol": 0.06}})
    out = compare_tables(loose, table(cand), table(ref))
    assert out["passed"] and out["columns"][2]["rtol"] == 0.06 and out["columns"][0]["rtol"] == 1e-3
    with pytest.raises(OracleInputError, match=r"per_column names \['Te'\], which are not compared"):
        compare_tables(cfg(per_column={"Te": {"rtol": 0.06}}), table(cand), table(ref))


def test_linear_interpolation_is_exact_for_a_line_and_bounded_for_a_curve():
    xc = np.linspace(0, 10, 11)
    xr = np.linspace(0.5, 9.5, 91)
    cand = table(np.column_stack([xc, 3 * xc + 1, np.sin(xc)]), ("l", "line", "sin"))
    ref = table(np.column_stack([xr, 3 * xr + 1, np.sin(xr)]), ("l", "line", "sin"))
    out = compare_tables(cfg(interpolate="linear", rtol=0, atol=1e-12, columns=["line"]), cand, ref)
    assert out["passed"] and out["columns"][0]["points"] == 91
    # linear interpolation error of sin on step h is at most h^2/8 * max|sin''| = 1/8
    out = compare_tables(cfg(interpolate="linear", rtol=0, atol=0.125, columns=["sin"]), cand, ref)
    assert out["passed"] and out["columns"][0]["max_abs"] > 0.05


def test_loglog_interpolation_is_exact_for_power_laws():
    xc = np.geomspace(1, 1000, 13)
    xr = np.geomspace(2, 900, 200)
    cand = table(np.column_stack([xc, 5 * xc ** -2.5, -2 * xc ** 1.5]), ("l", "down", "neg"))
    ref = table(np.column_stack([xr, 5 * xr ** -2.5, -2 * xr ** 1.5]), ("l", "down", "neg"))
    out = compare_tables(cfg(interpolate="loglog", rtol=1e-10), cand, ref)
    assert out["passed"], out
    assert compare_tables(cfg(interpolate="linear", rtol=1e-10), cand, ref)["passed"] is False


def test_loglog_on_a_sign_change_falls_back_and_says_so():
    xc = np.geomspace(1, 100, 50)
    cand = table(np.column_stack([xc, np.cos(np.log(xc))]), ("l", "y"))
    out = compare_tables(cfg(interpolate="loglog", rtol=1), cand, cand)
    assert "not of one sign" in out["note"]


def test_uncovered_reference_points_are_reported_and_fail():
    xc = np.linspace(0, 5, 6)
    xr = np.linspace(0, 10, 11)
    cand = table(np.column_stack([xc, xc]), ("l", "y"))
    ref = table(np.column_stack([xr, xr]), ("l", "y"))
    out = compare_tables(cfg(interpolate="linear"), cand, ref)
    assert not out["passed"] and out["columns"][0]["passed"]
    assert out["uncovered"]["count"] == 5 and out["uncovered"]["x_min"] == 6 and out["uncovered"]["x_max"] == 10
    assert compare_tables(cfg(interpolate="linear", range=[0, 5]), cand, ref)["passed"]
    far = table(np.column_stack([xc + 100, xc]), ("l", "y"))
    with pytest.raises(OracleInputError, match="x ranges do not overlap"):
        compare_tables(cfg(interpolate="linear"), far, ref)


def test_range_selects_reference_points():
    ref = spectrum(100)
    cand = ref.copy()
    cand[0, 1] *= 2  # l = 2 is bad, outside the range
    out = compare_tables(cfg(range=[3, 101]), table(cand), table(ref))
    assert out["passed"] and out["points_outside_range"] == 1 and out["columns"][0]["points"] == 99


def test_scale_for_a_quantity_crossing_zero():
    ref = spectrum(300)
    cand = ref.copy()
    cand[:, 3] += 1e-4 * np.sqrt(ref[:, 1] * ref[:, 2])  # a small error relative to sqrt(TT*EE)
    self_rel = compare_tables(cfg(columns=["TE"], rtol=1e-3), table(cand), table(ref))
    assert not self_rel["passed"]  # near the zero crossings the error relative to TE itself is huge
    scaled = compare_tables(cfg(columns=["TE"], rtol=1e-3, scale="sqrt(TT*EE)"), table(cand), table(ref))
    assert scaled["passed"]
    assert scaled["columns"][0]["max_rel"] == pytest.approx(1e-4, rel=1e-6)
    by_max = compare_tables(cfg(columns=["TE"], rtol=1e-3, scale="max"), table(cand), table(ref))
    assert by_max["passed"]
    by_number = compare_tables(cfg(columns=["TE"], rtol=1e-3, scale=1e6), table(cand), table(ref))
    assert by_number["passed"]
    override = cfg(columns=["TT", "TE"], rtol=1e-3, per_column={"TE": {"scale": "sqrt(col('TT') * EE)"}})
    assert compare_tables(override, table(cand), table(ref))["passed"]


def test_scale_expressions_cannot_run_code():
    from pydantic import ValidationError

    from nightshift.supervisor.verify.oracle.scale import evaluate
    # a wrong argument count too: numpy's sqrt(TT, EE) would write into EE (its out=), max(TT) fails at compare time
    for bad in ("__import__('os').system('true')", "TT.__class__", "open('x')", "TT if 1 else EE", "sqrt(TT, EE)",
                "max(TT)", "log()"):
        with pytest.raises(OracleInputError, match="not allowed"):
            evaluate(bad, lambda key: np.ones(3))
        with pytest.raises(ValidationError, match="not allowed"):  # refused when the config is loaded
            cfg(columns=["TE"], scale=bad)
    ref = spectrum(10)
    with pytest.raises(OracleInputError, match="no column named 'BB'"):
        compare_tables(cfg(columns=["TE"], scale="sqrt(BB)"), table(ref), table(ref))


def test_nan_and_inf_in_the_candidate_are_failing_points():
    ref = spectrum(20)
    cand = ref.copy()
    cand[3, 1], cand[7, 1], cand[9, 2] = np.nan, np.inf, -np.inf
    out = compare_tables(cfg(), table(cand), table(ref))
    tt, ee = out["columns"][0], out["columns"][1]
    assert not out["passed"] and tt["failing"] == 2 and tt["nonfinite"] == 2 and ee["failing"] == 1
    assert tt["ratio"] == np.inf and tt["x_worst"] in (5.0, 9.0)


def test_grids_that_differ_without_interpolation():
    ref = spectrum(20)
    with pytest.raises(OracleInputError, match="candidate has 19 rows to compare and the reference 20"):
        compare_tables(cfg(), table(ref[1:]), table(ref))
    moved = ref.copy()
    moved[4, 0] += 0.5
    with pytest.raises(OracleInputError, match=r"x grids differ first at row 4 .*interpolate"):
        compare_tables(cfg(), table(moved), table(ref))


def test_unknown_columns_name_the_side():
    ref = spectrum(20)
    with pytest.raises(OracleInputError, match="no column named 'BB'") as info:
        compare_tables(cfg(columns=["BB"]), table(ref), table(ref))
    assert info.value.side == "reference"
    with pytest.raises(OracleInputError) as info:
        compare_tables(cfg(columns=["TE"]), table(ref[:, :3]), table(ref))
    assert info.value.side == "candidate"


def test_report_numbers_match_an_independent_numpy_computation():
    ref = spectrum(5000, seed=3)
    cand = perturb(ref, 3e-3, seed=4)
    out = compare_tables(cfg(rtol=2e-3, atol=1e-6, range=[10, 4000]), table(cand), table(ref))
    sel = (ref[:, 0] >= 10) & (ref[:, 0] <= 4000)
    x = ref[sel, 0]
    for j, col in enumerate(out["columns"], start=1):
        r, c = ref[sel, j], cand[sel, j]
        d = np.abs(c - r)
        rel = d / np.abs(r)
        ok = np.isclose(c, r, rtol=2e-3, atol=1e-6)
        assert col["points"] == sel.sum()
        assert col["failing"] == (~ok).sum()
        assert col["passed"] == ok.all()
        assert col["max_rel"] == pytest.approx(rel.max(), rel=1e-12)
        assert col["x_max_rel"] == x[rel.argmax()]
        assert col["max_abs"] == pytest.approx(d.max(), rel=1e-12)
        assert col["x_max_abs"] == x[d.argmax()]
        assert col["median_rel"] == pytest.approx(np.median(rel), rel=1e-12)
        assert col["p95_rel"] == pytest.approx(np.percentile(rel, 95), rel=1e-12)
        ratio = d / (1e-6 + 2e-3 * np.abs(r))
        assert col["ratio"] == pytest.approx(ratio.max(), rel=1e-12)
        assert col["x_worst"] == x[ratio.argmax()]
    assert out["ratio"] == max(c["ratio"] for c in out["columns"])


def test_interpolated_report_matches_numpy_interp():
    rng = np.random.default_rng(7)
    xc = np.sort(rng.uniform(0, 100, 400))
    xr = np.linspace(5, 95, 1000)
    cand = table(np.column_stack([xc, np.sin(xc / 9) + 2]), ("l", "y"))
    ref = table(np.column_stack([xr, np.sin(xr / 9) + 2 + 1e-4 * np.cos(xr)]), ("l", "y"))
    col = compare_tables(cfg(interpolate="linear", rtol=1e-4), cand, ref)["columns"][0]
    at = np.interp(xr, xc, np.sin(xc / 9) + 2)
    r = np.sin(xr / 9) + 2 + 1e-4 * np.cos(xr)
    rel = np.abs(at - r) / np.abs(r)
    assert col["points"] == 1000 and col["failing"] == (rel > 1e-4).sum()
    assert col["max_rel"] == pytest.approx(rel.max(), rel=1e-12) and col["x_max_rel"] == xr[rel.argmax()]
    assert col["p95_rel"] == pytest.approx(np.percentile(rel, 95), rel=1e-12)


def test_a_range_that_selects_nothing_is_an_error():
    ref = spectrum(20)
    with pytest.raises(OracleInputError, match=r"no reference points to compare inside the range \[1000.0, 2000.0\]"):
        compare_tables(cfg(range=[1000, 2000]), table(ref), table(ref))


def test_median_and_p95_are_numpys_to_the_bit_and_a_nan_makes_them_inf():
    """The oracle's own percentiles (np.percentile would import numpy.ma, 7 ms of a compare) against numpy's
    linear ones: sizes 1 to 59 and larger, ties, inf, NaN, N-d; and the evidence's unique against np.unique."""
    import math
    import warnings

    from nightshift.supervisor.verify.oracle.compare import _percentiles
    from nightshift.supervisor.verify.oracle.evidence import sorted_unique

    rng = np.random.default_rng(7)
    cases = [np.array([np.inf, np.inf, 1.0]), np.array([np.inf] * 5)]
    for n in [*range(1, 60), 1000, 12345]:
        with_inf, with_nan = rng.random(n), rng.random(n)
        with_inf[rng.integers(0, n)], with_nan[rng.integers(0, n)] = np.inf, np.nan
        cases += [rng.random(n) * 10.0 ** rng.integers(-12, 3), np.round(rng.random(n), 2), with_inf, with_nan,
                  rng.random((n, 3))]
    for values in cases:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            numpys = tuple(math.inf if math.isnan(v) else float(v) for v in np.percentile(values, [50, 95]))
        assert _percentiles(values.copy()) == numpys, values
        finite = values[np.isfinite(values)]
        assert np.array_equal(sorted_unique(finite), np.unique(finite))
    assert _percentiles(np.empty(0)) == (math.inf, math.inf)
