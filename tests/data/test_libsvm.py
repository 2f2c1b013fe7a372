"""LIBSVM readers and the rcv1 / epsilon / covtype loaders, on the real epsilon sample and generated files."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from dpbench.data import covtype, load_dataset, sources
from dpbench.data.files import RemoteFile
from dpbench.data.libsvm import read_libsvm, read_libsvm_head
from dpbench.errors import DataError

EPS_TRAIN = "epsilon_sample/epsilon_normalized.head100.gz"
EPS_TEST = "epsilon_sample/epsilon_normalized.t.head100.gz"


def _write_libsvm(path: Path, n: int, n_features: int, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    """A random sparse ±1 LIBSVM file (compressed by suffix) and the matrix it holds."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, n_features, density=0.05, format="csr", random_state=seed, dtype=np.float64)
    X.data = np.round(X.data, 6)
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    buffer = io.BytesIO()
    dump_svmlight_file(X, y, buffer, zero_based=False)
    raw = buffer.getvalue()
    compress = {".bz2": bz2.compress, ".gz": gzip.compress}.get(path.suffix, bytes)
    path.write_bytes(compress(raw))
    return X, y


# ------------------------------------------------------------------ readers
@pytest.mark.data
@pytest.mark.parametrize(("rel", "negatives", "positives"), [(EPS_TRAIN, 54, 46), (EPS_TEST, 64, 36)])
def test_epsilon_sample(shared_data, rel, negatives, positives):
    path = shared_data(rel) / rel
    X, y, _ = read_libsvm(path, 2000)
    assert X.shape == (100, 2000) and X.nnz == 100 * 2000
    np.testing.assert_allclose(sp.linalg.norm(X, axis=1), 1.0, atol=1e-5)
    assert (y == -1).sum() == negatives and (y == 1).sum() == positives
    dense, y_head, info = read_libsvm_head(path, 2000, None)
    np.testing.assert_array_equal(dense, X.toarray())
    np.testing.assert_array_equal(y_head, y)
    first, _, info = read_libsvm_head(path, 2000, 7)
    np.testing.assert_array_equal(first, dense[:7])
    assert info == {"rule": "first n_max rows of the file", "n_max": 7}


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
def test_generated_file_roundtrip(tmp_path, suffix):
    path = tmp_path / f"toy{suffix}"
    X, y = _write_libsvm(path, 300, 40)
    X_read, y_read, info = read_libsvm(path, 50)
    assert X_read.shape == (300, 50) and sp.isspmatrix_csr(X_read)
    np.testing.assert_allclose(X_read[:, :40].toarray(), X.toarray())
    assert X_read[:, 40:].nnz == 0  # fixed n_features pads unused columns
    np.testing.assert_array_equal(y_read, y)
    assert info == {"rule": "all rows", "n_source": 300}


def test_n_max_subset_is_deterministic(tmp_path):
    path = tmp_path / "toy.bz2"
    X, y = _write_libsvm(path, 500, 30)
    a, ya, info = read_libsvm(path, 30, n_max=100, seed=3)
    b, yb, _ = read_libsvm(path, 30, n_max=100, seed=3)
    c, _, info_c = read_libsvm(path, 30, n_max=100, seed=4)
    assert (a != b).nnz == 0 and np.array_equal(ya, yb)
    idx = np.sort(np.random.default_rng(3).permutation(500)[:100])
    np.testing.assert_allclose(a.toarray(), X[idx].toarray())
    np.testing.assert_array_equal(ya, y[idx])
    assert info["index_sha256"] == hashlib.sha256(idx.astype("<i8").tobytes()).hexdigest()
    assert info["seed"] == 3 and info["n_max"] == 100 and info["n_source"] == 500
    assert info["index_sha256"] != info_c["index_sha256"] and (a != c).nnz > 0


def test_reader_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("+1 1:0.5\n2 3:1\n")
    with pytest.raises(DataError, match="labels must be -1/\\+1"):
        read_libsvm(bad, 5)
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("+1 x:y\n")
    with pytest.raises(DataError, match=r"cannot parse .*garbage\.txt as LIBSVM") as err:
        read_libsvm(garbage, 5)
    assert "\n" not in str(err.value)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(DataError, match="no LIBSVM rows"):
        read_libsvm_head(empty, 5, None)


# ------------------------------------------------------------------ loaders
@pytest.mark.data
def test_epsilon_loader_with_sample_files(shared_data, tmp_path):
    root = shared_data(EPS_TRAIN, EPS_TEST)
    options = {"train_file": str(root / EPS_TRAIN), "test_file": str(root / EPS_TEST), "n_max": 60}
    ds = load_dataset("epsilon", options, data_dir=root, allow_download=False)
    assert ds.X.shape == (60, 2000) and ds.X_test.shape == (100, 2000)
    assert isinstance(ds.X, np.ndarray) and ds.X.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(ds.X, axis=1), 1.0, atol=1e-5)
    assert [f["sha256"] for f in ds.info["files"]] == [
        "7ac399e1e025e376ef98ee45fde4c83d31eb85dd010ce81ffc8791d1d918fa1a",
        "d90ca43eeb40aafbc985f7e9ad088315ee5b7045a36d707cdbc7fcfe44cc62b4",
    ]
    copy = tmp_path / "renamed.gz"
    copy.write_bytes((root / EPS_TRAIN).read_bytes())
    moved = load_dataset("epsilon", {**options, "train_file": str(copy)}, data_dir=root, allow_download=False)
    assert moved.checksum == ds.checksum  # where a file lives is not part of the data's identity
    no_test = load_dataset(
        "epsilon", {"train_file": options["train_file"], "n_max_test": 0}, data_dir=root, allow_download=False
    )
    assert no_test.X_test is None and no_test.X.shape == (100, 2000)


def test_rcv1_loader_layout_split_and_pins(tmp_path):
    folder = tmp_path / "rcv1"
    folder.mkdir()
    _write_libsvm(folder / "rcv1_train.binary.bz2", 40, 60, seed=1)
    _write_libsvm(folder / "rcv1_test.binary.bz2", 200, 60, seed=2)
    ds = load_dataset("rcv1", {"n_max": 50}, data_dir=tmp_path, allow_download=False)
    assert ds.X.shape == (50, 47_236) and ds.X_test.shape == (40, 47_236)
    assert sp.isspmatrix_csr(ds.X) and sp.isspmatrix_csr(ds.X_test)
    assert [f["check"] for f in ds.info["files"]] == ["unpinned", "unpinned"]
    assert ds.info["subset"]["n_source"] == 200 and ds.info["subset_test"] == {"rule": "all rows", "n_source": 40}
    pins = {
        "sha256_train": hashlib.sha256((folder / "rcv1_train.binary.bz2").read_bytes()).hexdigest(),
        "sha256_test": hashlib.sha256((folder / "rcv1_test.binary.bz2").read_bytes()).hexdigest(),
    }
    standard = load_dataset("rcv1", {"split": "standard", **pins}, data_dir=tmp_path, allow_download=False)
    assert standard.X.shape[0] == 40 and standard.X_test.shape[0] == 200
    assert [f["check"] for f in standard.info["files"]] == ["sha256", "sha256"]
    pinned = load_dataset("rcv1", {"n_max": 50, **pins}, data_dir=tmp_path, allow_download=False)
    assert pinned.checksum == ds.checksum  # pins say how to verify, not what the data are
    with pytest.raises(DataError, match=re.escape("rcv1_test.binary.bz2")):
        load_dataset("rcv1", {"sha256_test": "0" * 64}, data_dir=tmp_path, allow_download=False)


def test_covtype_loader_on_a_generated_table(tmp_path, monkeypatch):
    n = 1000
    rng = np.random.default_rng(0)
    table = np.hstack([rng.integers(0, 3000, (n, 10)), rng.integers(0, 2, (n, 44)), rng.integers(1, 8, (n, 1))])
    path = tmp_path / "covtype" / "covtype.data.gz"
    path.parent.mkdir()
    pd.DataFrame(table).to_csv(path, header=False, index=False)
    spec = RemoteFile(**{**sources.COVTYPE.__dict__, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    monkeypatch.setattr(sources, "COVTYPE", spec)
    monkeypatch.setattr(covtype, "N_ROWS", n)
    ds = load_dataset("covtype", {"n_train": 300, "n_test": 200, "seed": 5}, data_dir=tmp_path, allow_download=False)
    assert ds.X.shape == (300, 55) and ds.X_test.shape == (200, 55)
    idx = np.random.default_rng(5).permutation(n)
    train, test = np.sort(idx[:300]), np.sort(idx[300:500])
    np.testing.assert_array_equal(ds.y, np.where(table[train, -1] == 2, 1.0, -1.0))
    np.testing.assert_array_equal(ds.y_test, np.where(table[test, -1] == 2, 1.0, -1.0))
    np.testing.assert_array_equal(ds.X[:, 0], 1.0)
    assert ds.X.min() == 0.0 and ds.X.max() == 1.0 and ds.X_test.min() >= 0.0 and ds.X_test.max() <= 1.0
    other = load_dataset(
        "covtype",
        {"n_train": 300, "n_test": 200, "seed": 5, "positive_class": 1},
        data_dir=tmp_path,
        allow_download=False,
    )
    assert other.checksum != ds.checksum
    np.testing.assert_array_equal(other.y, np.where(table[train, -1] == 1, 1.0, -1.0))
    with pytest.raises(DataError, match="exceeds"):
        load_dataset("covtype", {"n_train": 900, "n_test": 200}, data_dir=tmp_path, allow_download=False)
