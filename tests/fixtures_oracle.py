"""Fixtures for the oracle tests: tables written in every supported format and workspaces with an [oracle]
section. Everything is real files in tmp_path; nothing is mocked.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nightshift.supervisor.config.oracle import OracleConfig


def write_table(path: Path, data: np.ndarray, header: str | None = None, fmt: str = "%.17g",
                delimiter: str = " ") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [header] if header is not None else []
    lines += [delimiter.join(fmt % v for v in row) for row in np.atleast_2d(data)]
    path.write_text("\n".join(lines) + "\n")
    return path


def class_style(path: Path, names: list[str], data: np.ndarray) -> Path:
    """Aligned columns with leading and trailing spaces and a CLASS ``# 1:name 2:name`` header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "#" + "".join(f"{f'{i + 1}:{n}':>25}" for i, n in enumerate(names))
    rows = ["".join(f"{v:>25.16e}" for v in row) + "  " for row in data]
    path.write_text("# CLASS-like output\n# with a preamble\n" + head + "\n" + "\n".join(rows) + "\n")
    return path


def oracle(*compares: dict, **top) -> OracleConfig:
    return OracleConfig.model_validate({**top, "compare": list(compares)})


def spectrum(n: int = 200, seed: int = 0) -> np.ndarray:
    """Columns l, TT, EE, TE: TE crosses zero, as in CMB spectra."""
    rng = np.random.default_rng(seed)
    ell = np.arange(2, n + 2, dtype=float)
    tt = 1e3 / ell + rng.uniform(0, 1, n)
    ee = 10 / ell + rng.uniform(0, 0.1, n)
    te = np.sqrt(tt * ee) * np.cos(ell / 7.0)
    return np.column_stack([ell, tt, ee, te])


def perturb(data: np.ndarray, rel: float, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = data.copy()
    out[:, 1:] *= 1 + rng.uniform(-rel, rel, size=out[:, 1:].shape)
    return out


def workspace_with_oracle(root: Path, toml_oracle: str, reference: np.ndarray, candidate: np.ndarray | None,
                          header: str = "# 1:l 2:TT 3:EE 4:TE") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_table(root / "reference" / "cl.dat", reference, header)
    if candidate is not None:
        write_table(root / "out" / "cl.dat", candidate, header)
    (root / "nightshift.toml").write_text('goal = "agree with the reference"\n' + toml_oracle)
    return root


def all_text_under(root: Path) -> str:
    """Every file under ``root`` as text (binary bytes decoded leniently), for secrecy checks."""
    parts = []
    for path in root.rglob("*"):
        if path.is_file():
            parts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(parts)
