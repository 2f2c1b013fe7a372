"""Forest Covertype (Blackard & Dean 1999; UCI id 31) for kusner_bo Sec 6 (SVM hyper-parameter tuning).

``covtype.data.gz``: 581,012 rows of 54 features (10 numerics, 4 wilderness-area and 40 soil-type
0/1 indicators) and a class 1..7. kusner_bo train their SVMs on 36,603 inputs and draw validation
sets of up to 15,000 from the rest; they do not say how they made the task binary. The default
``positive_class: 2`` (Lodgepole Pine, the largest class, 48.8 %) against the rest is the usual
binarisation (Collobert, Bengio & Bengio, Neural Computation 2002; LIBSVM's covtype.binary).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.data import sources
from dpbench.data.dataset import Dataset, from_files, index_sha256
from dpbench.data.files import fetch
from dpbench.data.options import data_options, integer
from dpbench.data.preprocess import add_bias, minmax_scale, to_pm1
from dpbench.data.scaling import DeclaredRange, column_ranges, scale_to_ranges
from dpbench.errors import DataError

N_ROWS = 581_012

COVTYPE_OPTIONS = {
    "positive_class": integer(2, 1, 7),
    "n_train": integer(36_603, 1),
    "n_test": integer(15_000, 0, optional=True),
    "seed": integer(0, 0),
}


# Declared ranges of the 10 quantitative attributes, each naming its source (covtype.info gives their
# units, and the hill-shade's 0–255 index). The other 44 columns are 0/1 indicators (4 wilderness
# areas, 40 soil types).
_ROUND_METRES = "in metres, no range given; a round bound chosen in code, farther values are clipped"
_HILLSHADE = "covtype.info: hill-shade index at {} on the summer solstice, 0 to 255"
_RANGES = {
    0: DeclaredRange(
        1_000.0,
        4_500.0,
        "covtype.info: elevation in metres, in the Roosevelt National Forest of "
        "northern Colorado; Colorado lies between about 1,010 m (its border with Kansas) and 4,400 m "
        "(Mount Elbert) (USGS, Elevations and Distances in the United States), rounded outward",
    ),
    1: DeclaredRange(0.0, 360.0, "covtype.info: aspect in degrees azimuth, 0–360"),
    2: DeclaredRange(0.0, 90.0, "covtype.info: slope in degrees; a slope lies in 0–90"),
    3: DeclaredRange(0.0, 8_000.0, f"covtype.info: horizontal distance to surface water {_ROUND_METRES}"),
    4: DeclaredRange(-1_000.0, 1_000.0, f"covtype.info: vertical distance to surface water, signed, {_ROUND_METRES}"),
    5: DeclaredRange(0.0, 8_000.0, f"covtype.info: horizontal distance to a roadway {_ROUND_METRES}"),
    6: DeclaredRange(0.0, 255.0, _HILLSHADE.format("9am")),
    7: DeclaredRange(0.0, 255.0, _HILLSHADE.format("noon")),
    8: DeclaredRange(0.0, 255.0, _HILLSHADE.format("3pm")),
    9: DeclaredRange(0.0, 8_000.0, f"covtype.info: horizontal distance to a wildfire ignition point {_ROUND_METRES}"),
}


def load_covtype(options: dict, data_dir: Path, allow_download: bool, scaling: str) -> Dataset:
    """Seeded disjoint train/test subsets, features scaled + bias = 55 columns: clipped to the declared
    ranges and mapped to [0, 1] (``public``), or min–max by the training subset (``whole_file``).

    ``idx = np.random.default_rng(seed).permutation(581_012)``; train = ``idx[:n_train]``, test =
    the ``n_test`` indices that follow (``null``: all the rest); each sorted to keep file order.
    Label +1 for ``positive_class``, -1 otherwise.
    """
    source = fetch(sources.COVTYPE, data_dir, allow_download)
    table = pd.read_csv(source.path, header=None, dtype=np.float64).to_numpy()
    if table.shape != (N_ROWS, 55):
        raise DataError(f"{source.path} has shape {table.shape}, expected ({N_ROWS}, 55)")
    n_train, n_test = options["n_train"], options["n_test"]
    n_test = N_ROWS - n_train if n_test is None else n_test
    if n_train + n_test > N_ROWS:
        raise DataError(f"dataset 'covtype': n_train + n_test = {n_train + n_test} exceeds the {N_ROWS} rows")
    idx = np.random.default_rng(options["seed"]).permutation(N_ROWS)
    train, test = np.sort(idx[:n_train]), np.sort(idx[n_train : n_train + n_test])
    features, labels = table[:, :-1], table[:, -1]
    positive = options["positive_class"]
    if scaling == "whole_file":

        def scale(rows):
            return minmax_scale(rows, reference=features[train])
    else:
        ranges = column_ranges(features.shape[1], _RANGES)

        def scale(rows):
            return scale_to_ranges(rows, ranges)

    X, y = add_bias(scale(features[train])), to_pm1(labels[train], positive)
    X_test, y_test = None, None
    if n_test:
        X_test = add_bias(scale(features[test]))
        y_test = to_pm1(labels[test], positive)
    return from_files(
        "covtype",
        X,
        y,
        X_test,
        y_test,
        files=[source],
        options=options,
        data_options={**data_options(options, COVTYPE_OPTIONS), "scaling": scaling},
        encoding="scaled+bias",
        feature_bound=1.0,  # features in [0, 1] and a bias of 1, by the scaling
        scaling=scaling,
        notes=[
            f"class {positive} vs rest; "
            + (
                "features clipped to declared ranges, scaled to [0, 1]"
                if scaling == "public"
                else "features min-max scaled by the training subset (non-private), test clipped"
            )
        ],
        subset={
            "rule": "np.random.default_rng(seed).permutation(581012): train = first n_train, test = next n_test",
            "train_index_sha256": index_sha256(train),
            "test_index_sha256": index_sha256(test),
        },
    )
