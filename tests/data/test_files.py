"""Finding, verifying and downloading dataset files (no network: ``file://`` URLs only)."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import logging
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dpbench.data import files, load_dataset, sources
from dpbench.data.files import RemoteFile, fetch, verify_path
from dpbench.errors import ChecksumError, DataError

IPUMS_BR = "ipums_br/IPUMS-BR.dat.gz"


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def _dat_bytes(rows: int, n_columns: int) -> bytes:
    """A small DP-AGD-style table: integer features then a 0/1 label."""
    rng = np.random.default_rng(0)
    table = np.hstack([rng.integers(0, 5, (rows, n_columns - 1)), rng.integers(0, 2, (rows, 1))])
    return "".join(" ".join(map(str, r)) + " \n" for r in table).encode()


# ------------------------------------------------------------------ local files
@pytest.mark.data
def test_gz_sibling_verified_over_decompressed_bytes(shared_data):
    root = shared_data(IPUMS_BR)
    local = fetch(sources.IPUMS_BR_DAT, root, allow_download=False)
    assert local.path == root / IPUMS_BR
    assert local.sha256 == sources.IPUMS_BR_DAT.sha256 and local.check == "sha256"


@pytest.mark.data
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gz"])
def test_flipped_byte_raises_checksum_error_naming_file(shared_data, tmp_path, compressed):
    raw = gzip.decompress((shared_data(IPUMS_BR) / IPUMS_BR).read_bytes())
    bad = _flip(raw, len(raw) // 2)
    target = tmp_path / "ipums_br" / ("IPUMS-BR.dat.gz" if compressed else "IPUMS-BR.dat")
    target.parent.mkdir()
    target.write_bytes(gzip.compress(bad) if compressed else bad)
    with pytest.raises(ChecksumError) as err:
        load_dataset("ipums_br", {}, data_dir=tmp_path, allow_download=False)
    message = str(err.value)
    assert "\n" not in message
    assert str(target) in message
    assert sources.IPUMS_BR_DAT.sha256 in message and hashlib.sha256(bad).hexdigest() in message
    assert sources.IPUMS_BR_DAT.url in message


def test_missing_file_names_file_location_url_and_checksum(tmp_path):
    with pytest.raises(DataError) as err:
        load_dataset("ipums_us", {}, data_dir=tmp_path, allow_download=False, scaling="whole_file")
    message = str(err.value)
    assert "\n" not in message and not isinstance(err.value, ChecksumError)
    assert "IPUMS-US.dat" in message
    assert str(tmp_path / "ipums_us" / "IPUMS-US.dat") in message
    assert "https://github.com/ppmlguy/DP-AGD/raw/master/dataset/IPUMS-US.dat" in message
    assert "4dc4b720b45f718a7dd09af2d5be36d91e891c99" in message
    assert "data.allow_download=true" in message


@pytest.mark.parametrize("name", ["rcv1", "epsilon", "covtype"])
def test_download_only_datasets_fail_cleanly_when_absent(tmp_path, name):
    with pytest.raises(DataError, match=f"dataset '{name}' needs .* put it at {tmp_path}/{name}/"):
        load_dataset(name, {}, data_dir=tmp_path, allow_download=False)


def test_lookup_also_accepts_data_dir_root(tmp_path):
    data = b"1 2 3\n"
    spec = RemoteFile("toy", "toy.dat", "toy", "file:///nowhere", sha256=hashlib.sha256(data).hexdigest())
    (tmp_path / "toy.dat.gz").write_bytes(gzip.compress(data))
    assert fetch(spec, tmp_path, allow_download=False).path == tmp_path / "toy.dat.gz"
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "toy.dat").write_bytes(data)
    assert fetch(spec, tmp_path, allow_download=False).path == tmp_path / "toy" / "toy.dat"


def test_git_blob_verification(tmp_path):
    data = b"0 1 1\n1 0 0\n"
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "toy.dat").write_bytes(data)
    good = RemoteFile("toy", "toy.dat", "toy", "file:///nowhere", git_blob=_git_blob(data))
    local = fetch(good, tmp_path, allow_download=False)
    assert local.check == "git blob" and local.sha256 == hashlib.sha256(data).hexdigest()
    bad = RemoteFile("toy", "toy.dat", "toy", "file:///nowhere", git_blob="0" * 40)
    with pytest.raises(ChecksumError, match="expected git blob 0{40}, got " + _git_blob(data)):
        fetch(bad, tmp_path, allow_download=False)


def test_unpinned_file_is_recorded_with_a_warning(tmp_path, caplog):
    data = b"+1 1:0.5\n"
    (tmp_path / "toy.txt").write_bytes(data)
    spec = RemoteFile("toy", "toy.txt", "toy", "file:///nowhere")
    with caplog.at_level(logging.WARNING, logger="dpbench.data.files"):
        local = fetch(spec, tmp_path, allow_download=False)
    assert local.check == "unpinned" and local.sha256 == hashlib.sha256(data).hexdigest()
    assert "trust on first use" in caplog.text and local.sha256 in caplog.text
    assert fetch(spec, tmp_path, False, sha256=local.sha256).check == "sha256"
    with pytest.raises(ChecksumError):
        fetch(spec, tmp_path, False, sha256="f" * 64)


def test_verify_path_hashes_stand_in_as_is(tmp_path):
    path = tmp_path / "sample.gz"
    path.write_bytes(gzip.compress(b"-1 1:1\n"))
    local = verify_path(sources.EPSILON_TRAIN, path, hashlib.sha256(path.read_bytes()).hexdigest())
    assert local.check == "sha256" and local.path == path
    with pytest.raises(DataError, match="does not exist"):
        verify_path(sources.EPSILON_TRAIN, tmp_path / "absent.gz")


def test_hash_sidecar_cache_for_large_files(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "SIDECAR_MIN_BYTES", 0)
    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * 1000)
    digest = hashlib.sha256(b"x" * 1000).hexdigest()
    spec = RemoteFile("toy", "big.bin", "toy", "file:///nowhere", sha256=digest)
    fetch(spec, tmp_path, False)
    sidecar = tmp_path / "big.bin.sha256.json"
    cached = json.loads(sidecar.read_text())
    assert cached["sha256"] == digest and cached["size"] == 1000
    # a cached hash is trusted while size and mtime match ...
    sidecar.write_text(json.dumps({**cached, "sha256": "a" * 64}))
    with pytest.raises(ChecksumError, match=r"got a{64}"):
        fetch(spec, tmp_path, False)
    stat = path.stat()  # ... and recomputed once they change
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert fetch(spec, tmp_path, False).sha256 == digest


# ------------------------------------------------------------------ downloads
def _served(tmp_path: Path, data: bytes, name: str = "upstream.dat") -> str:
    src = tmp_path / "upstream"
    src.mkdir(exist_ok=True)
    (src / name).write_bytes(data)
    return (src / name).as_uri()


def test_download_verifies_and_renames_into_place(tmp_path):
    data = _dat_bytes(20, 58)
    spec = RemoteFile("ipums_us", "IPUMS-US.dat", "ipums_us", _served(tmp_path, data), git_blob=_git_blob(data))
    local = fetch(spec, tmp_path / "data", allow_download=True)
    target = tmp_path / "data" / "ipums_us" / "IPUMS-US.dat"
    assert local.path == target and target.read_bytes() == data and local.check == "git blob"
    assert os.listdir(target.parent) == ["IPUMS-US.dat"]
    assert fetch(spec, tmp_path / "data", allow_download=False).path == target  # found locally next time


def test_ipums_us_loads_from_a_verified_download(tmp_path, monkeypatch):
    data = _dat_bytes(30, 58)
    spec = RemoteFile("ipums_us", "IPUMS-US.dat", "ipums_us", _served(tmp_path, data), git_blob=_git_blob(data))
    monkeypatch.setattr(sources, "IPUMS_US_DAT", spec)
    ds = load_dataset("ipums_us", {}, data_dir=tmp_path / "data", allow_download=True, scaling="whole_file")
    assert ds.X.shape == (30, 58) and ds.info["files"][0]["check"] == "git blob"
    assert ds.X.min() >= 0 and ds.X.max() <= 1 and set(np.unique(ds.y)) <= {-1.0, 1.0}


def test_corrupt_download_is_rejected_and_not_left_behind(tmp_path):
    data = _dat_bytes(20, 58)
    spec = RemoteFile(
        "ipums_us", "IPUMS-US.dat", "ipums_us", _served(tmp_path, _flip(data, 7)), git_blob=_git_blob(data)
    )
    with pytest.raises(ChecksumError) as err:
        fetch(spec, tmp_path / "data", allow_download=True)
    assert spec.url in str(err.value) and "\n" not in str(err.value)
    assert os.listdir(tmp_path / "data" / "ipums_us") == []


def test_download_of_zip_member(shared_data, tmp_path, monkeypatch):
    rel = "bank_marketing/bank-full.csv.gz"
    raw = gzip.decompress((shared_data(rel) / rel).read_bytes())
    archive = tmp_path / "bank.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("bank-full.csv", raw)
        zf.writestr("bank.csv", b"unused")
    monkeypatch.setattr(sources, "BANK_FULL", RemoteFile(**{**sources.BANK_FULL.__dict__, "url": archive.as_uri()}))
    ds = load_dataset("bank", {"encoding": "onehot"}, data_dir=tmp_path / "data", allow_download=True)
    assert ds.X.shape == (45_211, 52)
    assert os.listdir(tmp_path / "data" / "bank_marketing") == ["bank-full.csv"]


def test_failed_download_says_so(tmp_path):
    spec = RemoteFile("toy", "toy.dat", "toy", (tmp_path / "absent").as_uri(), sha256="0" * 64)
    with pytest.raises(DataError, match=r"downloading file://.*absent failed"):
        fetch(spec, tmp_path / "data", allow_download=True)
    assert os.listdir(tmp_path / "data" / "toy") == []


def test_unwritable_data_dir_says_so(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    spec = RemoteFile("toy", "toy.dat", "toy", (tmp_path / "x").as_uri(), sha256="0" * 64)
    with pytest.raises(DataError, match="not writable"):
        fetch(spec, blocker, allow_download=True)


def test_unpinned_bz2_download_is_kept_and_recorded(tmp_path, caplog):
    data = bz2.compress(b"+1 3:0.5\n-1 1:1\n")
    spec = RemoteFile("rcv1", "toy.binary.bz2", "rcv1", _served(tmp_path, data, "toy.binary.bz2"))
    with caplog.at_level(logging.WARNING, logger="dpbench.data.files"):
        local = fetch(spec, tmp_path / "data", allow_download=True)
    assert local.check == "unpinned" and local.sha256 == hashlib.sha256(data).hexdigest()
    assert "trust on first use" in caplog.text
    shutil.rmtree(tmp_path / "upstream")
    assert fetch(spec, tmp_path / "data", allow_download=False).path == local.path
