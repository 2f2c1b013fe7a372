"""Which code computed a result: dpbench's version, a hash of the installed source that computes
results, and the git commit when the source is a git checkout.

A job's results rows carry the identity (column ``code_identity``, e.g. ``0.1.0+src.3fa2b1c9d0e4``)
and ``run.json`` the whole record. Because the version alone does not change with every fix, the
identity hashes what the source says: every ``*.py`` file of the installed ``dpbench`` package,
except the parts that only read results and never compute them (:data:`READERS_ONLY`), digested by
:func:`dpbench.code_meaning.meaning_digest`, which ignores formatting, comments, docstrings and where
a definition lives, so a refactor that only moves or documents code leaves finished results
current, and any change to a statement stales them. A job whose rows were computed by another
identity is *stale*: ``resume=strict`` (the default) computes it again, ``resume=keep`` keeps it and
``dpbench-status`` and ``dpbench-report`` show it as stale. The identity is not part of the job's
``config_hash``: the same configuration computed by other code is the same job, possibly stale.

Importing this module imports nothing heavy; :func:`current` reads the source once per process, and the
meaning digest of a given source (keyed by its bytes' sha256) is derived once and kept in the cache
directory (``code-meaning/``), so a later process only hashes the bytes (1.3 s → 0.13 s).
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dpbench import __version__
from dpbench.code_meaning import meaning_digest

PACKAGE_DIR = Path(__file__).resolve().parent
READERS_ONLY = ("plot", "report", "verify", "audit", "status.py", "cli_help.py", "check_method.py")
"""Subpackages and modules of dpbench that read results or explain the tool and never compute a
result: editing them leaves finished results current."""
DIGEST_CHARS = 12


@dataclass(frozen=True)
class CodeIdentity:
    """``identity`` = ``<version>+src.<first 12 hex digits of source_sha256>`` (the meaning digest,
    under its first name); git_commit and
    git_dirty are None outside a git checkout (an installed wheel)."""

    identity: str
    version: str
    source_sha256: str
    git_commit: str | None
    git_dirty: bool | None

    def record(self) -> dict[str, Any]:
        """The record ``run.json`` keeps under ``code``."""
        return asdict(self)


def source_files(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The package's ``*.py`` files that compute results, in the order they are hashed."""
    return sorted(
        (path for path in package_dir.rglob("*.py") if path.relative_to(package_dir).parts[0] not in READERS_ONLY),
        key=lambda path: path.relative_to(package_dir).as_posix(),
    )


HANDED_DOWN = "DPBENCH_CODE_MEANING"
"""The environment variable through which a process hands its meaning digest to the processes it starts
(launcher workers, subprocesses): ``<bytes digest>:<meaning digest>``. Parsing the source takes most of a
second; the bytes digest takes milliseconds, and a child uses the handed-down meaning only when the bytes
it runs are exactly those the parent parsed."""


def bytes_sha256(package_dir: Path, files: list[Path]) -> str:
    """sha256 over (relative path, NUL, length, NUL, bytes) of ``files``: which exact source this is."""
    digest = hashlib.sha256()
    for path in files:
        data = path.read_bytes()
        digest.update(f"{path.relative_to(package_dir).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def source_sha256(package_dir: Path = PACKAGE_DIR) -> str:
    """The meaning digest (:func:`dpbench.code_meaning.meaning_digest`) of :func:`source_files`; the
    running package's is handed down to child processes (:data:`HANDED_DOWN`)."""
    files = source_files(package_dir)
    exact = bytes_sha256(package_dir, files)
    handed = os.environ.get(HANDED_DOWN, "")
    if handed.startswith(f"{exact}:"):
        return handed.split(":", 1)[1]
    meaning = _remembered(exact)
    if meaning is None:
        meaning = meaning_digest(package_dir, files)
        _remember(exact, meaning)
    if package_dir == PACKAGE_DIR:
        os.environ[HANDED_DOWN] = f"{exact}:{meaning}"
    return meaning


def _meaning_file(exact: str) -> Path:
    """Where the meaning digest of the source whose bytes digest is ``exact`` is kept between processes."""
    from dpbench.conf_files import default_cache_dir

    return default_cache_dir() / "code-meaning" / exact


def _remembered(exact: str) -> str | None:
    """The meaning digest an earlier process derived from exactly these bytes (the digest algorithm is part
    of them), or None when there is none or it is not a sha256 (then it is derived again)."""
    try:
        meaning = _meaning_file(exact).read_text().strip()
    except OSError:
        return None
    return meaning if len(meaning) == 64 and all(c in "0123456789abcdef" for c in meaning) else None


def _remember(exact: str, meaning: str) -> None:
    """Keep ``meaning`` for the next process (atomically; a cache that cannot be written costs only time)."""
    path = _meaning_file(exact)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_name(f".{path.name}.{os.getpid()}")
        staging.write_text(meaning)
        os.replace(staging, path)
    except OSError:
        pass


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(PACKAGE_DIR), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.cache
def current() -> CodeIdentity:
    """The identity of the dpbench running in this process (computed once)."""
    digest = source_sha256()
    tracked = bool(_git("ls-files", "--", "__init__.py"))  # the package is this checkout's, not a venv inside it
    commit = _git("rev-parse", "HEAD") if tracked else None
    status = _git("status", "--porcelain", "--", ".") if commit else None
    return CodeIdentity(
        identity=f"{__version__}+src.{digest[:DIGEST_CHARS]}",
        version=__version__,
        source_sha256=digest,
        git_commit=commit,
        git_dirty=None if status is None else bool(status),
    )


@functools.cache
def plugin_meaning(package: str) -> str:
    """The meaning digest (:func:`dpbench.code_meaning.meaning_digest`) of every ``*.py`` file of an
    installed plugin's top-level package ``package``."""
    from dpbench.plugins import package_dir

    root = package_dir(package)
    if root is None:
        raise FileNotFoundError(f"the plugin package {package!r} is not importable")
    files = sorted(root.rglob("*.py"), key=lambda path: path.relative_to(root).as_posix())
    return meaning_digest(root, files)


def identity_of(method: type | None = None) -> str:
    """The identity of the code that computes a job of ``method`` (a method class): :func:`current`'s,
    and for a method of a plugin (a class outside dpbench) also its package's name and meaning digest,
    ``0.1.0+src.3fa2b1c9d0e4+my_plugin.5e0c…``, so that editing a plugin stales exactly its jobs."""
    base = current().identity
    package = method.__module__.split(".")[0] if method is not None else __package__
    if package == __package__:
        return base
    return f"{base}+{package}.{plugin_meaning(package)[:DIGEST_CHARS]}"


def stale_identities(recorded, now: str | None = None) -> list[str]:
    """The identities in ``recorded`` (a results column, or None when the file has no such column:
    results from before identities were recorded) other than ``now`` (the job's :func:`identity_of`;
    default :func:`current`'s); ``["unrecorded"]`` for a file without the column."""
    if recorded is None:
        return ["unrecorded"]
    now = now or current().identity
    return sorted({str(value) for value in recorded if str(value) != now})


def stale_note(stale: list[str], now: str | None = None) -> str:
    """What :func:`stale_identities` found, for a person: which code computed the job, and this one."""
    known = [identity for identity in stale if identity != "unrecorded"]
    who = [
        *([f"computed by {', '.join(known)}"] if known else []),
        *(["computed before dpbench recorded code identities"] if "unrecorded" in stale else []),
    ]
    return f"{' and '.join(who)}; this is {now or current().identity} (resume=strict recomputes it)"
