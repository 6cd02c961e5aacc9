"""A field's non-finite count says what its line says: NaN or inf in the candidate where the reference is finite
(as a table's is counted, compare.py); an inf the reference holds at the same place is not counted there, and the
first one quoted is the first such element."""
from __future__ import annotations

import numpy as np

from nightshift.supervisor.config.oracle import CompareConfig
from nightshift.supervisor.verify.oracle.field import Field
from nightshift.supervisor.verify.oracle.field_compare import compare_fields
from nightshift.supervisor.verify.oracle.layout import dim_names


def field(values: np.ndarray) -> Field:
    return Field("f.npy", values, values.shape, values.dtype, dim_names(values.ndim), [None] * values.ndim)


def test_only_a_non_finite_value_where_the_reference_is_finite_is_counted_and_quoted():
    ref = np.linspace(1.0, 2.0, 60).reshape(6, 10)
    ref[0, 1] = ref[1, 2] = np.inf  # the reference's own infinities
    cand = ref.copy()
    cand[4, 5] = np.nan  # the one fault
    comp = CompareConfig(name="f", candidate="out/f.npy", reference="reference/f.npy", rtol=1e-6)
    result = compare_fields(comp, field(cand), field(ref), "f")
    assert result["nonfinite_where_finite"] == 1 and result["row_first_nonfinite"] == 45, result
    assert np.isnan(result["cand_first_nonfinite"]) and result["ref_first_nonfinite"] == ref[4, 5]
    assert result["nonfinite"] == 3 and result["nan"] == 1  # all the candidate's non-finite values, as a table's


def test_no_fault_where_only_the_reference_is_infinite_there_too():
    ref = np.linspace(1.0, 2.0, 60).reshape(6, 10)
    ref[2, 3] = np.inf
    comp = CompareConfig(name="f", candidate="out/f.npy", reference="reference/f.npy", rtol=1e-6)
    result = compare_fields(comp, field(ref.copy()), field(ref), "f")
    assert "cand_first_nonfinite" not in result and "nonfinite_where_finite" not in result, result
