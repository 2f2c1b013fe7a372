"""The noise of a run comes from a secret key, not from its public seed (dpbench.privacy.noise_key)."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from dpbench.errors import DataError
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import laplace_mechanism
from dpbench.privacy.noise_key import (
    KEY_FILE,
    fingerprint,
    load_or_create,
    noise_rng,
    noise_seed,
    read_key,
    use_noise_key,
)
from dpbench.privacy.samplers import use_sampler

KEY = bytes(range(32))


def _secure_release(count: float, seed: int, key: bytes | None) -> float:
    """A count released by the secure discrete Laplace (ε = 1), its noise drawn as a GLM run's is."""
    with use_sampler("secure"), use_noise_key(key):
        rng = np.random.default_rng(noise_seed(seed, 0, 0))
        ledger = Ledger(1.0, 1e-8, "pure")
        return float(laplace_mechanism(np.array([count]), sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger)[0])


def test_a_release_replays_from_the_seed_only_without_a_secret_key():
    """Before the key, a published secure-Laplace release of the count 37 was matched bit for bit by
    replaying the public seed on the true input only (37, not 36 or 38): ε held for no adversary who
    reads the seed. Under ``noise_key=seed`` that is still so (development only); under a secret key
    the seed replays none of the candidates."""
    candidates = (36.0, 37.0, 38.0)
    public = _secure_release(37.0, seed=0, key=None)
    assert [_secure_release(c, 0, None) == public for c in candidates] == [False, True, False]
    secret = _secure_release(37.0, seed=0, key=KEY)
    assert not any(_secure_release(c, 0, None) == secret for c in candidates)
    assert _secure_release(37.0, 0, KEY) == secret  # the key's holder replays it


def test_noise_seed_is_the_old_stream_without_a_key_and_another_with_one():
    old = np.random.default_rng(np.random.SeedSequence([3, 1, 2])).standard_normal(4)
    assert np.array_equal(np.random.default_rng(noise_seed(3, 1, 2)).standard_normal(4), old)
    with use_noise_key(KEY):
        keyed = np.random.default_rng(noise_seed(3, 1, 2)).standard_normal(4)
        other = np.random.default_rng(noise_seed(3, 1, 3)).standard_normal(4)
    with use_noise_key(bytes(32)):
        other_key = np.random.default_rng(noise_seed(3, 1, 2)).standard_normal(4)
    assert not np.array_equal(keyed, old) and not np.array_equal(keyed, other) and not np.array_equal(keyed, other_key)


def test_noise_rng_continues_the_public_stream_only_without_a_key():
    public = np.random.default_rng(5)
    assert noise_rng(public, 5) is public
    with use_noise_key(KEY):
        assert noise_rng(public, 5) is not public


def test_the_key_file_is_private_made_once_and_checked(tmp_path):
    key = load_or_create(tmp_path)
    path = tmp_path / KEY_FILE
    assert len(key) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create(tmp_path) == key  # a second job of the sweep reads the same key
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]  # no temporary file left behind
    assert fingerprint(key) != fingerprint(bytes(32)) and len(fingerprint(key)) == 16
    os.chmod(path, 0o644)
    with pytest.raises(DataError, match="readable by others"):
        read_key(path)
    path.write_bytes(b"short")
    os.chmod(path, 0o600)
    with pytest.raises(DataError, match="holds 32 bytes"):
        read_key(path)
    with pytest.raises(DataError, match="missing"):
        read_key(tmp_path / "elsewhere" / KEY_FILE)


def test_two_sweeps_draw_different_keys(tmp_path):
    assert load_or_create(tmp_path / "a") != load_or_create(tmp_path / "b")
