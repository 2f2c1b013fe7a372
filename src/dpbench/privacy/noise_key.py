"""Secret noise: the randomness a mechanism's guarantee rests on is not a function of the public seed.

ε is a property of a mechanism whose coins are secret. A run's public randomness — the folds, the
held-out coins of private tuning, a dataset's draw, candidate grids and Sobol scrambles — derives from
the recorded ``seed`` so that every method sees the same folds and anyone can check them. Its noise
randomness — every Gaussian, Laplace and discrete draw, DP-SGD's Poisson batches, the trial count K of
repeat-and-select and its settings' draws — must not: with the seed published, a release could be
replayed and matched against candidate inputs bit for bit (under ``privacy.sampler=secure`` as well).

``privacy.noise_key`` chooses:

* ``secret`` (the default): noise streams derive from a 256-bit key drawn from the operating system's
  entropy (:func:`os.urandom`) once per sweep (or single run), stored with mode 0600 as ``noise.key``
  in the sweep's directory and never written into a results column. Every job of the sweep reads it, so
  a resumed job continues with the same key, and ``dpbench-verify --rerun`` replays a job bit for bit
  from it; ``run.json`` records only where the key file is (relative to the job) and a fingerprint.
  Publishing the results without the key file publishes nothing that replays the noise.
* ``seed``: the noise streams derive from the seed alone — dpbench's behaviour before the key existed,
  bit-identical, fully reproducible for development. Such rows say ``noise_key=seed`` and
  ``dpbench-publish`` refuses them: their noise is public.

The engine makes a job's key current with :func:`use_noise_key`; the job kinds take their noise
generators from :func:`noise_rng`, which continues the public stream under ``seed`` (as before) and
starts a stream from the key and the same spawn path under ``secret``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

import numpy as np

from dpbench.errors import DataError

__all__ = [
    "KEY_FILE",
    "NOISE_KEYS",
    "current_key",
    "fingerprint",
    "load_or_create",
    "noise_rng",
    "noise_seed",
    "use_noise_key",
]

NOISE_KEYS = ("secret", "seed")
KEY_FILE = "noise.key"
_KEY_BYTES = 32

_CURRENT: ContextVar[bytes | None] = ContextVar("dpbench_noise_key", default=None)


def load_or_create(directory: Path) -> bytes:
    """The sweep's key in ``directory/noise.key``, created from OS entropy when there is none.

    Creation is atomic (written to a private temporary file, then hard-linked into place, which fails
    if another job of the sweep linked first), so parallel jobs of one sweep all end up with one key.
    A key file of the wrong size or readable by others is refused: a key that is not secret, or not
    the one the sweep's finished jobs used, would silently change what their rows mean."""
    directory = Path(directory)
    path = directory / KEY_FILE
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".noise-", dir=directory)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(_KEY_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another job of the sweep made it first: use theirs
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
    return read_key(path)


def read_key(path: Path) -> bytes:
    """The key stored at ``path``; a clear error when it is missing, of the wrong size or not private."""
    path = Path(path)
    try:
        key = path.read_bytes()
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        raise DataError(
            f"{path}: the sweep's secret noise key is missing; the jobs' noise cannot be replayed without it "
            "(rerun with force=true for new noise, or privacy.noise_key=seed for development)"
        ) from None
    if len(key) != _KEY_BYTES:
        raise DataError(
            f"{path}: a noise key holds {_KEY_BYTES} bytes, this file holds {len(key)} (corrupt or not a key)"
        )
    if mode & 0o077:
        raise DataError(f"{path}: the secret noise key is readable by others (mode {mode:o}); chmod 600 it")
    return key


def fingerprint(key: bytes) -> str:
    """A public name of ``key`` (sha256 of a domain tag and the key, 16 hex digits): tells which key a
    job used without revealing it."""
    return hashlib.sha256(b"dpbench noise key\0" + key).hexdigest()[:16]


@contextlib.contextmanager
def use_noise_key(key: bytes | None) -> Iterator[None]:
    """Make ``key`` the current noise key (None: ``privacy.noise_key=seed``) for the block."""
    token = _CURRENT.set(key)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_key() -> bytes | None:
    """The noise key made current by :func:`use_noise_key`, None when noise follows the seed."""
    return _CURRENT.get()


def noise_seed(seed: int, *spawn: int) -> np.random.SeedSequence:
    """The noise ``SeedSequence`` of the public path (seed, *spawn): ``SeedSequence([seed, *spawn])``
    when no key is current, else one from the key's 256 bits and the same path."""
    key = current_key()
    if key is None:
        return np.random.SeedSequence([seed, *spawn])
    return np.random.SeedSequence([int.from_bytes(key, "big"), seed, *spawn])


def noise_rng(public: np.random.Generator, seed: int, *spawn: int) -> np.random.Generator:
    """The generator a job's noise draws from after its public draws from ``public`` (the stream of
    the path (seed, *spawn)): ``public`` itself, continued, when no key is current (bit-identical to
    the runs before the key existed); a fresh stream from the key and the path otherwise."""
    if current_key() is None:
        return public
    return np.random.default_rng(noise_seed(seed, *spawn))
