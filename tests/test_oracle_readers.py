"""Each reader of the oracle: text tables (CLASS, named headers, CSV, TSV, headerless), .npy/.npz, HDF5 and
JSON, columns by name or index, and the bad inputs a reader must name precisely."""
from __future__ import annotations

import json

import numpy as np
import pytest

from nightshift.supervisor.verify.oracle.read_text import _parse_numpy
from nightshift.supervisor.verify.oracle.readers import read_table, split_part
from nightshift.supervisor.verify.oracle.table import OracleInputError
from tests.fixtures_oracle import class_style, spectrum, write_table

DATA = spectrum(50)


def _check(table, names=("l", "TT", "EE", "TE"), by_index=True):
    assert table.rows == len(DATA)
    for i, name in enumerate(names):
        assert np.array_equal(table.column(name, "reference"), DATA[:, i])
        if by_index:
            assert np.array_equal(table.column(i, "reference"), DATA[:, i])


def test_class_style_aligned_header_with_spaces_in_names(tmp_path):
    names = ["l", "proper time [Gyr]", "EE", "TE"]
    table = read_table(class_style(tmp_path / "cl.dat", names, DATA))
    assert table.names == names
    _check(table, names)


def test_plain_named_comment_header_and_uncommented_header_row(tmp_path):
    _check(read_table(write_table(tmp_path / "a.dat", DATA, "#    L    TT    EE    TE", delimiter="   ")),
           ("L", "TT", "EE", "TE"))
    _check(read_table(write_table(tmp_path / "b.dat", DATA, "l TT EE TE")))
    # case-insensitive lookup when unique
    assert np.array_equal(read_table(tmp_path / "b.dat").column("tt", "c"), DATA[:, 1])


def test_csv_and_tsv_with_header_rows(tmp_path):
    _check(read_table(write_table(tmp_path / "a.csv", DATA, "l,TT,EE,TE", delimiter=",")))
    _check(read_table(write_table(tmp_path / "q.csv", DATA, '"l","TT","EE","TE"', delimiter=",")))
    _check(read_table(write_table(tmp_path / "a.tsv", DATA, "l\tTT\tEE\tTE", delimiter="\t")))


def test_headerless_table_by_index(tmp_path):
    table = read_table(write_table(tmp_path / "a.txt", DATA))
    assert table.names == [None] * 4
    assert np.array_equal(table.column(3, "c"), DATA[:, 3])
    assert np.array_equal(table.column("2", "c"), DATA[:, 2])


def test_fast_and_numpy_paths_agree_bit_for_bit(tmp_path):
    path = write_table(tmp_path / "a.dat", DATA, "# 1:l 2:TT 3:EE 4:TE")
    fast = read_table(path)
    slow = _parse_numpy(path, 1, None)
    for i in range(4):
        assert np.array_equal(fast.columns[i], slow[:, i])


def test_comment_lines_inside_the_body_are_skipped(tmp_path):
    path = tmp_path / "a.dat"
    path.write_text("# l y\n1 2\n# a note\n3 4\n\n5 6\n")
    table = read_table(path)
    assert table.column("y", "c").tolist() == [2, 4, 6]


def test_nan_and_inf_cells_are_read_as_numbers(tmp_path):
    path = tmp_path / "a.dat"
    path.write_text("# x y\n1 nan\n2 inf\n3 -Inf\n")
    y = read_table(path).column("y", "c")
    assert np.isnan(y[0]) and y[1] == np.inf and y[2] == -np.inf


def test_npy_plain_and_structured(tmp_path):
    np.save(tmp_path / "a.npy", DATA)
    _check(read_table(tmp_path / "a.npy"), (0, 1, 2, 3))
    rec = np.zeros(len(DATA), dtype=[("l", float), ("TT", float), ("EE", float), ("TE", float)])
    for i, n in enumerate(rec.dtype.names):
        rec[n] = DATA[:, i]
    np.save(tmp_path / "r.npy", rec)
    _check(read_table(tmp_path / "r.npy"))


def test_npz_columns_and_named_part(tmp_path):
    np.savez(tmp_path / "c.npz", l=DATA[:, 0], TT=DATA[:, 1], EE=DATA[:, 2], TE=DATA[:, 3])
    _check(read_table(tmp_path / "c.npz"))
    np.savez(tmp_path / "m.npz", cl=DATA, other=np.zeros(3))
    path, part = split_part(str(tmp_path / "m.npz") + ":cl")
    _check(read_table(type(tmp_path)(path), part), (0, 1, 2, 3))
    with pytest.raises(OracleInputError, match="name one as"):
        read_table(tmp_path / "m.npz")


def test_hdf5_group_of_columns_and_dataset_path(tmp_path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "r.h5", "w") as f:
        g = f.create_group("spectra")
        for i, n in enumerate(("l", "TT", "EE", "TE")):
            g[n] = DATA[:, i]
        f["matrix"] = DATA
    _check(read_table(tmp_path / "r.h5", "spectra"), by_index=False)  # HDF5 lists members by name
    _check(read_table(*_split(tmp_path, "r.h5:/matrix")), (0, 1, 2, 3))


def _split(tmp_path, spec):
    path, part = split_part(str(tmp_path / spec))
    return type(tmp_path)(path), part


def test_json_columns_records_rows_and_member_path(tmp_path):
    cols = {n: DATA[:, i].tolist() for i, n in enumerate(("l", "TT", "EE", "TE"))}
    (tmp_path / "c.json").write_text(json.dumps(cols))
    _check(read_table(tmp_path / "c.json"))
    records = [dict(zip(cols, row)) for row in DATA.tolist()]
    (tmp_path / "r.json").write_text(json.dumps({"result": {"cl": records}}))
    _check(read_table(*_split(tmp_path, "r.json:result.cl")))
    (tmp_path / "rows.json").write_text(json.dumps([list(cols)] + DATA.tolist()))
    _check(read_table(tmp_path / "rows.json"))
    (tmp_path / "plain.json").write_text(json.dumps(DATA.tolist()))
    _check(read_table(tmp_path / "plain.json"), (0, 1, 2, 3))


def test_unknown_column_lists_the_ones_that_exist(tmp_path):
    table = read_table(write_table(tmp_path / "a.dat", DATA, "# 1:l 2:TT 3:EE 4:TE"))
    with pytest.raises(OracleInputError, match=r"no column named 'BB'; it has: 0:l, 1:TT, 2:EE, 3:TE"):
        table.column("BB", "candidate")
    with pytest.raises(OracleInputError, match="no column 7 .0-based; it has 4 columns"):
        table.column(7, "candidate")


def test_non_numeric_cell_names_file_line_and_column(tmp_path):
    path = tmp_path / "a.dat"
    path.write_text("# 1:l 2:TT\n2 1.0\n3 2.0\n4 oops\n")
    with pytest.raises(OracleInputError, match=r"a\.dat line 4, column 2: 'oops' is not a number"):
        read_table(path)
    csv = tmp_path / "b.csv"
    csv.write_text("l,TT\n2,1.0\n3,\n")
    with pytest.raises(OracleInputError, match=r"b\.csv line 3, column 2: '' is not a number"):
        read_table(csv)


def test_ragged_row_names_its_line(tmp_path):
    path = tmp_path / "a.dat"
    path.write_text("1 2 3\n4 5 6\n7 8\n")
    with pytest.raises(OracleInputError, match=r"line 3: 2 columns, expected 3"):
        read_table(path)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(OracleInputError, match="no such file"):
        read_table(tmp_path / "nope.dat")
    (tmp_path / "e.dat").write_text("# only a header\n")
    with pytest.raises(OracleInputError, match="no data rows"):
        read_table(tmp_path / "e.dat")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(OracleInputError, match="cannot be read as .json"):
        read_table(tmp_path / "bad.json")
