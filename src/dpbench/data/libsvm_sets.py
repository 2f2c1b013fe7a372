"""rcv1 and epsilon, the LIBSVM binary data sets of liu_dda Sec 5.1 (Table 2).

Neither file has a published checksum: pin them with the ``sha256_train`` / ``sha256_test``
options (the LIBSVM train and test *files*), otherwise their sha256 is recorded in ``info`` and a
warning logged. Both are already row-normalised, so no scaling and no bias column is added
(liu_dda's SVM, eq. 27, has no intercept).
"""

from __future__ import annotations

from pathlib import Path

from dpbench.data import sources
from dpbench.data.dataset import Dataset, from_files
from dpbench.data.files import LocalFile, RemoteFile, fetch, verify_path
from dpbench.data.libsvm import read_libsvm, read_libsvm_head
from dpbench.data.options import choice, data_options, integer, path_or_null, sha256_pin

RCV1_FEATURES = 47_236
EPSILON_FEATURES = 2_000

RCV1_OPTIONS = {
    "split": choice("swapped", "standard"),
    "n_max": integer(None, 1, optional=True),
    "n_max_test": integer(None, 0, optional=True),
    "seed": integer(0, 0),
    "sha256_train": sha256_pin(),
    "sha256_test": sha256_pin(),
}
EPSILON_OPTIONS = {
    "n_max": integer(50_000, 1, optional=True),
    "n_max_test": integer(10_000, 0, optional=True),
    "train_file": path_or_null(),
    "test_file": path_or_null(),
    "sha256_train": sha256_pin(),
    "sha256_test": sha256_pin(),
}


def load_rcv1(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """RCV1 binary (Lewis et al., JMLR 2004; LIBSVM's rcv1.binary), sparse CSR throughout, 47,236 features.

    ``split: swapped`` (default) trains on LIBSVM's 677,399-row ``rcv1_test.binary``, the set
    liu_dda Table 2 uses, and tests on the 20,242-row ``rcv1_train.binary``; ``standard`` is the
    other way round. ``n_max`` / ``n_max_test`` keep a seeded random subset (see
    :func:`~dpbench.data.libsvm.read_libsvm`); ``n_max_test: 0`` loads no test set.
    """
    pins = {sources.RCV1_TRAIN: options["sha256_train"], sources.RCV1_TEST: options["sha256_test"]}
    train_spec, test_spec = (
        (sources.RCV1_TEST, sources.RCV1_TRAIN)
        if options["split"] == "swapped"
        else (sources.RCV1_TRAIN, sources.RCV1_TEST)
    )
    train = fetch(train_spec, data_dir, allow_download, sha256=pins[train_spec])
    X, y, subset = read_libsvm(train.path, RCV1_FEATURES, n_max=options["n_max"], seed=options["seed"])
    files, X_test, y_test, subset_test = [train], None, None, None
    if options["n_max_test"] != 0:
        test = fetch(test_spec, data_dir, allow_download, sha256=pins[test_spec])
        X_test, y_test, subset_test = read_libsvm(
            test.path, RCV1_FEATURES, n_max=options["n_max_test"], seed=options["seed"]
        )
        files.append(test)
    return from_files(
        "rcv1",
        X,
        y,
        X_test,
        y_test,
        files=files,
        options=options,
        data_options=data_options(options, RCV1_OPTIONS),
        encoding="libsvm",
        notes=[f"train file {train_spec.name}, test file {test_spec.name}; tf-idf rows of unit L2 norm"],
        subset=subset,
        subset_test=subset_test,
        row_norm_bound=1.0,  # LIBSVM's rcv1.binary rows are normalised to unit length
    )


def load_epsilon(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """epsilon (PASCAL Large Scale Learning Challenge 2008, LIBSVM's normalised version), 2,000 dense features.

    The full train file is 400,000 rows (~12 GB of text), so the first ``n_max`` rows of each file
    are streamed from the ``.bz2`` (default 50,000 train / 10,000 test; ``null`` = all,
    ``n_max_test: 0`` = no test set). ``train_file`` / ``test_file`` name a stand-in file (e.g. the
    100-row samples in shared/data/epsilon_sample), hashed as-is instead of the canonical download.
    """
    train = _locate(sources.EPSILON_TRAIN, options["train_file"], options["sha256_train"], data_dir, allow_download)
    X, y, subset = read_libsvm_head(train.path, EPSILON_FEATURES, options["n_max"])
    files, X_test, y_test, subset_test = [train], None, None, None
    if options["n_max_test"] != 0:
        test = _locate(sources.EPSILON_TEST, options["test_file"], options["sha256_test"], data_dir, allow_download)
        X_test, y_test, subset_test = read_libsvm_head(test.path, EPSILON_FEATURES, options["n_max_test"])
        files.append(test)
    return from_files(
        "epsilon",
        X,
        y,
        X_test,
        y_test,
        files=files,
        options=options,
        data_options=data_options(options, EPSILON_OPTIONS),
        encoding="libsvm",
        notes=["dense rows of unit L2 norm"],
        subset=subset,
        subset_test=subset_test,
        row_norm_bound=1.0,  # epsilon_normalized: unit-length rows
    )


def _locate(spec: RemoteFile, path: str | None, pin: str | None, data_dir: Path, allow_download: bool) -> LocalFile:
    return fetch(spec, data_dir, allow_download, sha256=pin) if path is None else verify_path(spec, Path(path), pin)
