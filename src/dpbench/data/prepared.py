"""Prepared data, once: a dataset read from files is parsed and preprocessed once per (dataset, options,
source files, code) and kept as ``.npy`` arrays under ``<cache>/prepared/``; every later job, sweep worker
and rerun loads the arrays instead of parsing text again.

An entry is trusted only while it proves itself: its manifest names the sha256 of every array file and
of every source file it was built from, and the key it was made for includes the code's meaning digest
(:func:`dpbench.code_identity.current`), so a changed source file, an edited loader or a corrupt array is
found on load and the entry rebuilt (a corrupt one with a warning naming it). Source files are hashed as
the loaders hash them (:func:`~dpbench.data.files.file_sha256`, with its size-and-mtime sidecar for huge
files); the arrays, which are smaller than the text they come from, are hashed on every load.

Generated datasets (no source files) are not cached: they are as quick to make as to load. An entry is
written into a temporary directory and renamed into place, so a reader never sees half of one and two
workers building the same entry at once both succeed (the second's copy is dropped).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dpbench.conf_files import default_cache_dir
from dpbench.data.dataset import Dataset
from dpbench.data.files import file_sha256

log = logging.getLogger("dpbench")

FORMAT = 1
"""The layout of an entry; a manifest of another format is rebuilt."""
MANIFEST = "manifest.json"
_PARTS = ("X", "y", "X_test", "y_test")


def cache_root() -> Path:
    """Where prepared datasets live: ``<dpbench cache>/prepared`` (``$DPBENCH_CACHE``, never the data
    directory, which may be shared and read-only)."""
    return default_cache_dir() / "prepared"


def entry_key(fields: Mapping[str, Any]) -> str:
    """The entry's name: a digest of ``fields`` (dataset, resolved options, scaling) and the code's meaning."""
    from dpbench.code_identity import current

    payload = {"format": FORMAT, "code": current().source_sha256, **fields}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:32]


def load_prepared(fields: Mapping[str, Any], build: Callable[[], Dataset], root: Path | None = None) -> Dataset:
    """The dataset ``fields`` describe: from its prepared entry when one proves itself, else ``build()``,
    whose result is then prepared for next time (when it came from files)."""
    entry = (root or cache_root()) / entry_key(fields)
    dataset = read_entry(entry)
    if dataset is not None:
        return dataset
    shutil.rmtree(entry, ignore_errors=True)  # a stale or corrupt entry makes way for the new one
    dataset = build()
    if dataset.info.get("files"):
        write_entry(entry, dataset)
    return dataset


def read_entry(entry: Path) -> Dataset | None:
    """The dataset in ``entry``, or None when there is none, it is of another format, a source file changed,
    or an array does not match its recorded sha256 (then with a warning: the entry is rebuilt)."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("prepared data %s: unreadable manifest (%s); rebuilding it", entry, exc)
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    try:
        return _dataset_of(entry, manifest)
    except (KeyError, TypeError, ValueError, OSError) as exc:
        log.warning("prepared data %s: unreadable (%s); rebuilding it", entry, exc)
        return None


def _dataset_of(entry: Path, manifest: dict[str, Any]) -> Dataset | None:
    """:func:`read_entry`'s work once the manifest is read."""
    for source in manifest["sources"]:
        path = Path(source["path"])
        if not path.is_file() or file_sha256(path)[0] != source["sha256"]:
            log.info("prepared data %s: its source %s changed; preparing it again", entry, path)
            return None
    arrays: dict[str, Any] = {}
    for part in _PARTS:
        stored = manifest["arrays"].get(part)
        if stored is None:
            arrays[part] = None
            continue
        loaded = _load_part(entry, stored)
        if loaded is None:
            log.warning("prepared data %s: %s does not match its recorded sha256; rebuilding it", entry, part)
            return None
        arrays[part] = loaded
    return Dataset(manifest["name"], checksum=manifest["checksum"], info=manifest["info"], **arrays)


def write_entry(entry: Path, dataset: Dataset) -> None:
    """Prepare ``dataset`` into ``entry`` (atomically; a failure to write only loses the cache)."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        manifest = {
            "format": FORMAT,
            "name": dataset.name,
            "checksum": dataset.checksum,
            "info": dataset.info,
            "sources": [{"path": f["path"], "sha256": file_sha256(Path(f["path"]))[0]} for f in dataset.info["files"]],
            "arrays": {
                part: _save_part(staging, part, getattr(dataset, part))
                for part in _PARTS
                if getattr(dataset, part) is not None
            },
        }
        (staging / MANIFEST).write_text(json.dumps(manifest))
        os.replace(staging, entry)
    except (OSError, TypeError, ValueError) as exc:  # TypeError: an info that is not JSON (then no cache)
        log.debug("could not prepare %s: %s", entry, exc)  # a full or read-only cache: the data are still right
        shutil.rmtree(staging, ignore_errors=True)


def _save_part(directory: Path, part: str, matrix) -> dict[str, Any]:
    """Save one array (dense, or CSR as its three arrays) and record each file's sha256."""
    import scipy.sparse as sp

    if sp.issparse(matrix):
        csr = matrix.tocsr()
        pieces = {"data": csr.data, "indices": csr.indices, "indptr": csr.indptr}
        stored: dict[str, Any] = {"kind": "csr", "shape": list(csr.shape)}
    else:
        pieces, stored = {"array": np.asarray(matrix)}, {"kind": "dense"}
    stored["files"] = {}
    for piece, array in pieces.items():
        path = directory / f"{part}.{piece}.npy"
        np.save(path, array, allow_pickle=False)
        stored["files"][piece] = {"file": path.name, "sha256": _bytes_sha256(path)}
    return stored


def _load_part(entry: Path, stored: Mapping[str, Any]):
    """The array ``stored`` describes, or None when a file is missing or does not match its sha256."""
    import scipy.sparse as sp

    pieces = {}
    for piece, record in stored["files"].items():
        path = entry / record["file"]
        if not path.is_file() or _bytes_sha256(path) != record["sha256"]:
            return None
        pieces[piece] = np.load(path, allow_pickle=False)
    if stored["kind"] == "csr":
        return sp.csr_matrix((pieces["data"], pieces["indices"], pieces["indptr"]), shape=tuple(stored["shape"]))
    return pieces["array"]


def _bytes_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
