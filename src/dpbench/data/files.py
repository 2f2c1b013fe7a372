"""Find, download and verify dataset files.

A :class:`RemoteFile` names one canonical upstream file (its URL and its published or pinned
checksum). :func:`fetch` looks for it under ``data_dir`` — as the file itself or as a ``.gz``
sibling, the layout of the project's shared data folder where every file is ``gzip -9 -n`` — then,
if allowed, downloads it; whatever it returns has been checked against the canonical checksum
(sha256, or a git blob id where that is all that was published, as for DP-AGD's IPUMS-US.dat).
Files with no published checksum (rcv1, epsilon) can be pinned by the user; unpinned, their sha256
is recorded and a warning logged (trust on first use). See shared/data/README.md.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from dpbench.errors import ChecksumError, DataError
from dpbench.permissions import apply_umask

log = logging.getLogger(__name__)

_CHUNK = 1 << 20
#: Files at least this large get a sidecar ``<file>.sha256.json`` caching their hash.
SIDECAR_MIN_BYTES = 256 << 20
_COMPRESSED = (".gz", ".bz2")


@dataclass(frozen=True)
class RemoteFile:
    """One canonical upstream file of a dataset.

    ``sha256`` is over the canonical file's bytes (for a canonical file that is itself compressed,
    e.g. ``covtype.data.gz``, over the compressed bytes); ``git_blob`` is ``sha1(b"blob <len>\\0" +
    bytes)``, as ``git hash-object`` prints it. Either, both or neither may be known. When
    ``member`` is set, ``url`` serves a zip archive and the canonical file is that member of it.
    """

    dataset: str
    name: str
    subdir: str
    url: str
    sha256: str | None = None
    git_blob: str | None = None
    member: str | None = None


@dataclass(frozen=True)
class LocalFile:
    """A verified file on disk: ``sha256`` is over its canonical (decompressed-sibling) bytes."""

    name: str
    path: Path
    sha256: str
    check: str  # "sha256", "git blob" or "unpinned"

    def record(self) -> dict:
        """JSON-serialisable description for ``Dataset.info``."""
        return {"name": self.name, "path": str(self.path), "sha256": self.sha256, "check": self.check}


def fetch(spec: RemoteFile, data_dir: Path, allow_download: bool, *, sha256: str | None = None) -> LocalFile:
    """Return the verified local copy of ``spec``, downloading it into ``data_dir`` if allowed.

    Looks at ``data_dir/<subdir>/<name>``, ``data_dir/<subdir>/<name>.gz``, ``data_dir/<name>``
    and ``data_dir/<name>.gz`` in that order; a ``.gz`` sibling is verified over its decompressed
    bytes. ``sha256`` is a user pin for files that have no published checksum.
    """
    data_dir = Path(data_dir)
    expected = sha256 or spec.sha256
    for path, decompress in _candidates(spec, data_dir):
        if path.is_file():
            return _verify(spec, path, decompress, expected, spec.git_blob, shown=str(path))
    target = data_dir / spec.subdir / spec.name
    if not allow_download:
        raise DataError(
            f"dataset {spec.dataset!r} needs {spec.name}: put it at {target}{_gz_note(spec)} "
            f"or set data.allow_download=true to fetch {spec.url}{_member_note(spec)}{_checksum_note(spec, expected)}"
        )
    return _download(spec, target, expected)


def verify_path(spec: RemoteFile, path: Path, sha256: str | None = None) -> LocalFile:
    """Verify a user-named stand-in for ``spec`` (hashed as-is) against the pin ``sha256``, if any."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"dataset {spec.dataset!r}: file {path} does not exist")
    return _verify(spec, path, False, sha256, None, shown=str(path))


def _accepts_gz_sibling(spec: RemoteFile) -> bool:
    return not spec.name.endswith(_COMPRESSED)


def _candidates(spec: RemoteFile, data_dir: Path) -> list[tuple[Path, bool]]:
    out = []
    for folder in (data_dir / spec.subdir, data_dir):
        out.append((folder / spec.name, False))
        if _accepts_gz_sibling(spec):
            out.append((folder / f"{spec.name}.gz", True))
    return out


def _gz_note(spec: RemoteFile) -> str:
    return " (or .gz)" if _accepts_gz_sibling(spec) else ""


def _member_note(spec: RemoteFile) -> str:
    return f" (member {spec.member})" if spec.member else ""


def _checksum_note(spec: RemoteFile, expected: str | None) -> str:
    if expected:
        return f" (sha256 {expected})"
    if spec.git_blob:
        return f" (git blob {spec.git_blob})"
    return " (no published checksum: its sha256 will be recorded)"


def _verify(
    spec: RemoteFile, path: Path, decompress: bool, expected: str | None, blob: str | None, *, shown: str
) -> LocalFile:
    """Hash ``path`` and compare with the ``expected`` sha256, else the git ``blob`` id, else trust on first use."""
    actual, size = _sha256(path, decompress)
    what = f"{shown} (decompressed)" if decompress else shown
    if expected:
        if actual != expected.lower():
            raise ChecksumError(
                f"checksum mismatch for {what}: expected sha256 {expected}, got {actual}; "
                f"get a good copy from {spec.url}"
            )
        return LocalFile(spec.name, path, actual, "sha256")
    if blob:
        actual_blob = _git_blob(path, decompress, size)
        if actual_blob != blob:
            raise ChecksumError(
                f"checksum mismatch for {what}: expected git blob {blob}, got {actual_blob}; "
                f"get a good copy from {spec.url}"
            )
        return LocalFile(spec.name, path, actual, "git blob")
    log.warning(
        "%s has no pinned checksum; recorded sha256 %s (trust on first use: pin it in the dataset config)",
        what,
        actual,
    )
    return LocalFile(spec.name, path, actual, "unpinned")


def file_sha256(path: Path) -> tuple[str, int]:
    """(sha256, size in bytes) of the file at ``path``, read in chunks."""
    return _sha256(Path(path), decompress=False)


def _open(path: Path, decompress: bool) -> BinaryIO:
    return gzip.open(path, "rb") if decompress else open(path, "rb")


def _sha256(path: Path, decompress: bool) -> tuple[str, int]:
    """Streaming sha256 and byte count of the canonical bytes, cached in a sidecar for huge files."""
    stat = path.stat()
    sidecar = path.with_name(path.name + ".sha256.json")
    key = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "decompressed": decompress}
    big = stat.st_size >= SIDECAR_MIN_BYTES
    if big and sidecar.is_file():
        try:
            cached = json.loads(sidecar.read_text())
            if {k: cached.get(k) for k in key} == key:
                return cached["sha256"], cached["canonical_size"]
        except (OSError, ValueError, KeyError, AttributeError):
            log.debug("ignoring unreadable hash cache %s", sidecar)
    h, size = hashlib.sha256(), 0
    try:
        with _open(path, decompress) as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
                size += len(chunk)
    except (OSError, EOFError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from exc
    digest = h.hexdigest()
    if big:
        try:
            sidecar.write_text(json.dumps({**key, "sha256": digest, "canonical_size": size}))
        except OSError:
            log.debug("could not write hash cache %s", sidecar)
    return digest, size


def _git_blob(path: Path, decompress: bool, size: int) -> str:
    """Git blob id: sha1 over ``b"blob <size>\\0"`` followed by the canonical bytes."""
    h = hashlib.sha1(b"blob %d\0" % size)
    with _open(path, decompress) as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _download(spec: RemoteFile, target: Path, expected: str | None) -> LocalFile:
    """Download ``spec.url`` to a temp file beside ``target``, verify it, then rename it into place."""
    import urllib.error
    import urllib.request

    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{spec.name}.", suffix=".part")
    except OSError as exc:
        raise DataError(f"cannot download {spec.name}: data folder {folder} is not writable ({exc.strerror})") from exc
    tmp = Path(tmp_name)
    try:
        log.info("downloading %s to %s", spec.url, target)
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(spec.url, timeout=60) as response:
                shutil.copyfileobj(response, out, _CHUNK)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise DataError(f"downloading {spec.url} failed: {reason}") from exc
        if spec.member:
            _extract_member(tmp, spec)
        checked = _verify(spec, tmp, False, expected, spec.git_blob, shown=f"{spec.url} (downloaded)")
        apply_umask(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return LocalFile(spec.name, target, checked.sha256, checked.check)


def _extract_member(archive: Path, spec: RemoteFile) -> None:
    """Replace the downloaded zip ``archive`` by its member ``spec.member``, in place."""
    extracted = archive.with_name(archive.name + ".member")
    try:
        with zipfile.ZipFile(archive) as zf, zf.open(spec.member) as src, open(extracted, "wb") as out:
            shutil.copyfileobj(src, out, _CHUNK)
        os.replace(extracted, archive)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise DataError(f"downloaded {spec.url} is not a zip archive holding {spec.member}: {exc}") from exc
    finally:
        extracted.unlink(missing_ok=True)
