"""Issue 44 on the outputs of a real code: CAMB (installed from the package index) computes the matter power spectrum
P(k) (400 points, k 1e-4..6 h/Mpc, P from ~2e4 down to ~0.8) and the lensed C_l's (TT, EE, BB, TE over l = 2..2500:
BB's low-l tail six decades under its peak, TE changing sign). They are written as CLASS/CAMB-style whitespace
tables with '#' headers into a git workspace, and `nightshift init` with the goal "agree with CAMB to 0.1%" writes
the comparisons.

The tolerance means what the goal says: no value of these spectra is zero at float64's precision, so every point is
compared relatively (atol 0), and TE's sign changes are named with how to loosen; `nightshift check` calibrates
them clean. An honest candidate passes (P(k) recomputed by CAMB with another accuracy setting, the C_l's with
noise far under the tolerance), and its passing line names the bound that held; a perturbation above the tolerance fails
wherever it is: in P(k)'s small-scale tail, in one decade of k, in BB at low l. The floor the oracle derived before
(rtol x RMS(|reference|)) is shown to have hidden a 5% tail and is refused by check, naming the share it hid.

CAMB runs three times per module (one C_l run, two P(k) runs): about 15 s on two cores.
"""
from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest

from nightshift.supervisor.config.schema import load_config
from tests.fixtures_core import nightshift, require_tool

GOAL = "agree with CAMB to 0.1%"
RTOL = 1e-3
COSMOLOGY = dict(H0=67.5, ombh2=0.022, omch2=0.122, As=2e-9, ns=0.965)
SOLVER = ("import shutil, os\nos.makedirs('out', exist_ok=True)\nfor name in ('pk.dat', 'cl_lensed.dat'):\n"
          "    shutil.copy(os.path.join('data', name), os.path.join('out', name))\n")


def _power(camb, boost: float):
    params = camb.set_params(**COSMOLOGY, WantCls=False, AccuracyBoost=boost)
    params.set_matter_power(redshifts=[0.0], kmax=10.0)
    k, _, pk = camb.get_results(params).get_matter_power_spectrum(minkh=1e-4, maxkh=6, npoints=400)
    return np.asarray(k), np.asarray(pk[0])


@pytest.fixture(scope="module")
def spectra():
    """CAMB's outputs, computed once for the module: the reference's and an honest recomputation of P(k)."""
    camb = pytest.importorskip("camb") if not _ci() else __import__("camb")
    params = camb.set_params(**COSMOLOGY, lmax=2500)
    cl = camb.get_results(params).get_cmb_power_spectra(params, CMB_unit="muK")["lensed_scalar"]
    ell = np.arange(cl.shape[0])[2:2501]
    k, pk = _power(camb, 1.0)
    _, pk_boosted = _power(camb, 1.2)  # CAMB's own answer at a higher accuracy: ~8e-4 off at most
    return {"k": k, "pk": pk, "pk_boosted": pk_boosted, "l": ell.astype(float), "cl": np.asarray(cl[2:2501, :4])}


def _ci() -> bool:
    import os

    return os.environ.get("CI") == "true"  # under CI a missing real part fails, never skips


def write_pk(path, k, pk):
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, np.column_stack([k, pk]), header="1:k 2:P", fmt="%.12e")


def write_cl(path, ell, cl):  # CAMB's column order: TT EE BB TE
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, np.column_stack([ell, cl]), header="1:l 2:TT 3:EE 4:BB 5:TE", fmt="%.12e")


@pytest.fixture
def ws(tmp_path, spectra):
    require_tool("git")
    root = tmp_path / "ws"
    write_pk(root / "reference" / "pk.dat", spectra["k"], spectra["pk"])
    write_cl(root / "reference" / "cl_lensed.dat", spectra["l"], spectra["cl"])
    out = nightshift("init", str(root), "--goal", GOAL, "--reference-dir", "reference", "--agent", "demo")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    (root / "init.out").write_text(out.stdout)
    (root / "solver.py").write_text(SOLVER)
    toml = root / "nightshift.toml"
    toml.write_text(toml.read_text().replace('\ncommand = ""', f'\ncommand = "{sys.executable} solver.py"', 1))
    return root


def honest(spectra) -> tuple[np.ndarray, np.ndarray]:
    """P(k) as CAMB computes it at another accuracy setting; the C_l's with noise far under the tolerance (1e-9:
    above the printed 12 digits, which the embedded-values scan would rightly take for the reference's own)."""
    noise = np.random.default_rng(44).standard_normal(spectra["cl"].shape)
    return spectra["pk_boosted"].copy(), spectra["cl"] * (1 + 1e-9 * noise)


def candidate(root, spectra, pk=None, cl=None):
    fair_pk, fair_cl = honest(spectra)
    write_pk(root / "data" / "pk.dat", spectra["k"], fair_pk if pk is None else pk)
    write_cl(root / "data" / "cl_lensed.dat", spectra["l"], fair_cl if cl is None else cl)


def compare(root) -> tuple[int, dict, str]:
    done = nightshift("compare", str(root), "--json", timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def test_init_compares_every_decade_relatively_and_names_te_sign_changes_with_how_to_loosen(ws):
    oracle = load_config(ws).oracle
    by_name = {c.name: c for c in oracle.compare}
    assert set(by_name) == {"pk", "cl_lensed"}, by_name
    assert by_name["pk"].rtol == RTOL and by_name["pk"].per_column["P"].atol == 0
    assert {key: over.atol for key, over in by_name["cl_lensed"].per_column.items()} == \
        {"TT": 0, "EE": 0, "BB": 0, "TE": 0}
    said = (ws / "init.out").read_text()
    assert re.search(r"reference/pk.dat column P: atol = 0 \(no value is zero at float64's precision: relative "
                     r"everywhere over 4.\d decades\)", said), said
    assert re.search(r"column BB: atol = 0 \(no value is zero at float64's precision: relative everywhere over "
                     r"4.\d decades\)", said), said
    te = next(line for line in (ws / "nightshift.toml").read_text().splitlines() if line.startswith('per_column."TE"'))
    assert re.search(r"it changes sign \d+ times: near its zeros the relative error grows", te), te
    assert "loosen with an atol or a scale expression" in te, te


def test_check_calibrates_every_column_and_an_honest_recomputation_passes_naming_the_bound_that_held(ws, spectra):
    candidate(ws, spectra)
    done = nightshift("check", str(ws), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    calibration = [line for line in done.stdout.splitlines() if "calibration" in line]
    assert calibration and all(line.startswith("ok") for line in calibration), done.stdout
    assert not any(line.startswith("FAIL") for line in done.stdout.splitlines()), done.stdout
    code, report, _ = compare(ws)
    assert code == 0 and all(entry["passed"] for entry in report["comparisons"]), report
    [pk] = [entry for entry in report["comparisons"] if entry["name"] == "pk"]
    worst = max(pk["columns"], key=lambda c: c["ratio"])
    assert worst["column"] == "P" and 0.5 < worst["ratio"] <= 1  # CAMB's accuracy setting moves P(k) ~8e-4
    line = nightshift("compare", str(ws)).stdout
    assert "held |cand - ref| <= atol + rtol x |ref| (atol 0, rtol 0.001) at every point; worst 0." in line, line
    assert not re.search(r"\d <= rtol", line), line  # never "0.0499 <= rtol 0.001"


CHEATS = {
    "P(k)'s small-scale tail 5% high": ("pk", lambda s: (s["k"] > 1, None), 1.05, "P"),
    "one decade of k, 3x the tolerance": ("pk", lambda s: ((s["k"] >= 1e-3) & (s["k"] < 1e-2), None), 1 + 3 * RTOL,
                                          "P"),
    "BB at low l, 3x the tolerance": ("cl", lambda s: (s["l"] < 30, 2), 1 + 3 * RTOL, "BB"),
    "EE's smallest decade, 3x the tolerance": ("cl", lambda s: (np.abs(s["cl"][:, 1]) < 10 * np.abs(
        s["cl"][:, 1]).min(), 1), 1 + 3 * RTOL, "EE"),
}


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_a_perturbation_above_the_tolerance_fails_wherever_it_is(ws, spectra, cheat):
    which, where, factor, column = CHEATS[cheat]
    rows, index = where(spectra)
    assert rows.any() and not rows.all()
    pk, cl = honest(spectra)  # an honest candidate, moved by the cheat in one place only
    if which == "pk":
        pk[rows] = spectra["pk"][rows] * factor
    else:
        cl[rows, index] = spectra["cl"][rows, index] * factor
    candidate(ws, spectra, pk=pk, cl=cl)
    code, report, _ = compare(ws)
    assert code == 1, report
    failing = [(e["name"], c) for e in report["comparisons"] for c in e["columns"] if not c["passed"]]
    assert [c["column"] for _, c in failing] == [column], failing
    [(_, col)] = failing
    x = spectra["k"] if which == "pk" else spectra["l"]
    assert col["failing"] >= 1 and rows[int(np.argmin(np.abs(x - col["x_worst"])))], col  # caught where it is


def test_the_old_rms_floor_hid_a_5_percent_tail_and_check_now_refuses_it_naming_the_share(ws, spectra):
    rms = float(np.sqrt(np.mean(spectra["pk"] ** 2)))
    toml = ws / "nightshift.toml"
    toml.write_text(re.sub(r'per_column\."P" = \{ atol = 0 \}', f'per_column."P" = {{ atol = {RTOL * rms:.3g} }}',
                           toml.read_text()))
    pk, _ = honest(spectra)
    pk[spectra["k"] > 1] *= 1.05
    candidate(ws, spectra, pk=pk)
    code, report, _ = compare(ws)
    assert code == 0, report  # what a floor of rtol x RMS let through: a 5% error in the tail
    done = nightshift("check", str(ws), timeout=300)
    [line] = [one for one in done.stdout.splitlines() if one.startswith("FAIL") and "calibration" in one]
    share = np.mean(RTOL * spectra["pk"] * (3 - 1) <= float(f"{RTOL * rms:.3g}"))
    assert line.startswith("FAIL  calibration  pk P: |reference| from 1e-01 to "), line
    assert f"({100 * share:.3g}%) cannot fail at 3x rtol (0.001): atol dominates there" in line, line
    assert "compared absolutely (more than 10%)" in line and "lower atol below" in line, line
    assert done.returncode != 0


def test_camb_is_a_real_part_of_the_test_extra():
    import tomllib
    from pathlib import Path

    extra = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    assert any(dep.startswith("camb") for dep in extra), extra
