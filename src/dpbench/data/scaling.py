"""Feature scaling that leaks nothing: every numeric attribute is clipped to a range declared in code,
then mapped to [0, 1].

chen_lee Sec 5.2 and DP-AGD's ``load_dat(path, minmax=(0, 1))`` scale each feature by the minimum and
maximum of the whole file, training rows included, before the folds are drawn. That scaling is a
function of every record: in Bank, ``previous`` has a unique maximum 275 (next 58), so removing one
person rescales the column 4.74× for everyone else, and no privacy analysis pays for it. dpbench's
default (``data.scaling=public``) uses ranges fixed in advance instead, so removing or changing one
record changes no other record's features; the authors' whole-file min–max stays available as
``data.scaling=whole_file``, recorded in every row as not covered by the privacy guarantee.

Every declared range is a :class:`DeclaredRange` that names its source (:mod:`dpbench.data.census`,
:mod:`dpbench.data.covtype`): the dataset's documentation or encoding where it states a limit (0/1
indicators, day of month 1–31, hill-shade 0–255, census top codes and extraction rules), otherwise a
domain limit (an age of at most 120 years, the US population for a census weight) or a round bound in
the attribute's unit, said as such. A value outside its range is clipped, which changes that record
only. Ranges are public constants of the benchmark, never re-derived from a run's data. IPUMS-BR's are
the exception: no public source gives them (they were read off the file), so its rows are outside the
guarantee under every scaling (``Dataset.info["guarantee_breaches"]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

SCALINGS = ("public", "whole_file")
"""``data.scaling`` values: declared ranges (private-safe, the default) or the authors' whole-file min–max."""

BINARY = (0.0, 1.0)
"""The range of a 0/1 indicator (one-hot column): scaling leaves it unchanged."""


@dataclass(frozen=True)
class DeclaredRange:
    """The range [``low``, ``high``] a numeric attribute is clipped to under ``data.scaling=public``,
    and ``source``: the public document, encoding or domain limit it comes from, or, for a range no
    public source gives (IPUMS-BR's), how it was obtained."""

    low: float
    high: float
    source: str

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"a declared range needs low < high, got ({self.low}, {self.high})")
        if not self.source.strip():
            raise ValueError(f"the declared range ({self.low}, {self.high}) names no source")

    @property
    def bounds(self) -> tuple[float, float]:
        """(low, high), as :func:`scale_to_ranges` takes them."""
        return (self.low, self.high)


def scale_to_ranges(X: np.ndarray, ranges: Sequence[tuple[float, float]]) -> np.ndarray:
    """Clip column j of dense ``X`` to ``ranges[j]`` = (lo, hi), lo < hi, and map it to [0, 1] by
    (x − lo)/(hi − lo). Every output depends on its own row and the constants only."""
    X = np.asarray(X, dtype=np.float64)
    bounds = np.asarray(ranges, dtype=np.float64)
    if bounds.shape != (X.shape[1], 2):
        raise ValueError(
            f"need one (lo, hi) range per column: {X.shape[1]} columns, got ranges of shape {bounds.shape}"
        )
    lo, hi = bounds[:, 0], bounds[:, 1]
    if not np.all(np.isfinite(bounds)) or not np.all(lo < hi):
        bad = int(np.flatnonzero(~(np.isfinite(lo) & np.isfinite(hi) & (lo < hi)))[0])
        raise ValueError(f"range of column {bad} must be finite with lo < hi, got {tuple(bounds[bad])}")
    return (np.clip(X, lo, hi) - lo) / (hi - lo)


def column_ranges(n_columns: int, numeric: Mapping[int, DeclaredRange]) -> list[tuple[float, float]]:
    """Ranges for ``n_columns`` columns: ``numeric[j]``'s bounds for the listed columns, :data:`BINARY` for the rest."""
    unknown = sorted(set(numeric) - set(range(n_columns)))
    if unknown:
        raise ValueError(f"numeric ranges given for columns {unknown}, beyond the {n_columns} columns")
    return [numeric[j].bounds if j in numeric else BINARY for j in range(n_columns)]
