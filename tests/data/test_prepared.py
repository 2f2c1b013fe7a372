"""Prepared data: a dataset parsed once is loaded from its arrays after, bit for bit, and an entry that does
not prove itself (a changed source, a corrupt array, a garbled manifest) is rebuilt, never trusted."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
import scipy.sparse as sp

from dpbench.data.dataset import Dataset
from dpbench.data.prepared import MANIFEST, entry_key, load_prepared

ADULT = ("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")


def _same(a: Dataset, b: Dataset) -> None:
    """Bit-identical arrays (values, dtypes, sparsity pattern), checksum and JSON info."""
    for part in ("X", "y", "X_test", "y_test"):
        left, right = getattr(a, part), getattr(b, part)
        assert (left is None) == (right is None), part
        if left is None:
            continue
        assert sp.issparse(left) == sp.issparse(right) and left.dtype == right.dtype and left.shape == right.shape
        if sp.issparse(left):
            for piece in ("data", "indices", "indptr"):
                assert np.array_equal(getattr(left, piece), getattr(right, piece)), (part, piece)
                assert getattr(left, piece).dtype == getattr(right, piece).dtype, (part, piece)
        else:
            assert np.array_equal(left, right), part
    assert a.checksum == b.checksum and a.name == b.name
    assert json.loads(json.dumps(a.info)) == b.info


class Builder:
    """A loader stand-in reading a source file: counts its calls."""

    def __init__(self, source, sparse: bool):
        self.source, self.sparse, self.calls = source, sparse, 0

    def __call__(self) -> Dataset:
        self.calls += 1
        values = np.frombuffer(self.source.read_bytes(), dtype=np.uint8).astype(float)
        X = values.reshape(-1, 4)
        y = np.where(X[:, 0] > 100, 1.0, -1.0)
        info = {"files": [{"path": str(self.source), "sha256": "…"}], "n": int(X.shape[0])}
        return Dataset("toy", sp.csr_matrix(X) if self.sparse else X, y, X[:3], y[:3], f"sum{values.sum()}", info)


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "toy.bin"
    path.write_bytes(np.random.default_rng(0).integers(0, 255, 400, dtype=np.uint8).tobytes())
    return path


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_a_dataset_is_parsed_once_and_loaded_bit_for_bit_after(tmp_path, source, sparse):
    build = Builder(source, sparse)
    fields = {"dataset": "toy", "options": {"a": 1}}
    first = load_prepared(fields, build, tmp_path / "cache")
    second = load_prepared(fields, build, tmp_path / "cache")
    assert build.calls == 1
    _same(first, second)
    load_prepared({"dataset": "toy", "options": {"a": 2}}, build, tmp_path / "cache")
    assert build.calls == 2  # other options: another entry


def test_a_changed_source_file_is_prepared_again(tmp_path, source):
    build = Builder(source, sparse=False)
    fields = {"dataset": "toy", "options": {}}
    load_prepared(fields, build, tmp_path / "cache")
    source.write_bytes(source.read_bytes()[::-1])
    again = load_prepared(fields, build, tmp_path / "cache")
    assert build.calls == 2
    _same(again, Builder(source, sparse=False)())


@pytest.mark.parametrize("damage", ["array", "manifest", "missing array"])
def test_a_corrupt_entry_is_rebuilt_with_a_warning_never_trusted(tmp_path, source, damage, caplog):
    build = Builder(source, sparse=True)
    fields = {"dataset": "toy", "options": {}}
    first = load_prepared(fields, build, tmp_path / "cache")
    entry = tmp_path / "cache" / entry_key(fields)
    if damage == "manifest":
        (entry / MANIFEST).write_text("{not json")
    else:
        target = entry / "X.data.npy"
        if damage == "missing array":
            target.unlink()
        else:
            raw = bytearray(target.read_bytes())
            raw[-1] ^= 0xFF  # one flipped byte of one value
            target.write_bytes(bytes(raw))
    with caplog.at_level(logging.WARNING, logger="dpbench"):
        again = load_prepared(fields, build, tmp_path / "cache")
    assert build.calls == 2 and "rebuilding it" in caplog.text and str(entry) in caplog.text
    _same(first, again)
    assert load_prepared(fields, build, tmp_path / "cache") is not None and build.calls == 2  # repaired


def test_a_generated_dataset_is_not_prepared(tmp_path):
    def build():
        return Dataset("gen", np.ones((3, 2)), np.ones(3), None, None, "c", {"files": []})

    load_prepared({"dataset": "gen"}, build, tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_adult_from_its_prepared_arrays_equals_adult_parsed(shared_data, tmp_path, monkeypatch):
    """The real loader: Adult's LIBSVM text parsed, then the same from the prepared entry, bit for bit;
    the second load parses nothing."""
    from dpbench.data import libsvm
    from dpbench.data.registry import load_dataset

    root = shared_data(*ADULT)
    monkeypatch.setenv("DPBENCH_CACHE", str(tmp_path / "cache"))
    parsed = load_dataset("adult", {}, data_dir=root, allow_download=False)

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(libsvm, "load_svmlight_file", no_parsing)
    prepared = load_dataset("adult", {}, data_dir=root, allow_download=False)
    _same(parsed, prepared)


def test_a_generated_dataset_is_made_once_per_process_read_only(tmp_path, monkeypatch):
    """A sweep worker running job after job on one synthetic dataset makes it once: the next load returns the same
    read-only arrays (with its own copy of info); other options make another."""
    from dpbench.data import registry, synthetic

    made = []
    make = synthetic.make_logreg
    monkeypatch.setattr(synthetic, "make_logreg", lambda *args: made.append(args) or make(*args))
    monkeypatch.setattr(registry, "_GENERATED", registry.RecentAnswers(1))
    options = {"n": 500, "d": 4}
    first = registry.load_dataset("synthetic_logreg", options, data_dir=tmp_path, allow_download=False)
    again = registry.load_dataset("synthetic_logreg", options, data_dir=tmp_path, allow_download=False)
    assert len(made) == 1 and again.X is first.X and again.info == first.info and again.info is not first.info
    with pytest.raises(ValueError, match="read-only"):
        first.X[0, 0] = 0.5
    other = registry.load_dataset("synthetic_logreg", {**options, "seed": 1}, data_dir=tmp_path, allow_download=False)
    in_float32 = registry.load_dataset(
        "synthetic_logreg", options, data_dir=tmp_path, allow_download=False, dtype="float32"
    )
    assert len(made) == 3 and not np.array_equal(other.X, first.X) and in_float32.X.dtype == np.float32
