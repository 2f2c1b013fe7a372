"""Importing the engine, ``dpbench --help`` and a refused configuration answer fast because
they load none of the heavy libraries. Not timed: each case runs in a fresh interpreter and lists
which of those modules it left in ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpbench.errors import ConfigError

HEAVY = ("pandas", "pyarrow", "sklearn", "scipy", "matplotlib", "tqdm", "joblib")
HYDRA = ("hydra", "omegaconf")


def run_and_list_loaded(code: str, cwd, watched: tuple[str, ...]) -> tuple[list[str], subprocess.CompletedProcess]:
    """Run ``code`` in a fresh interpreter in ``cwd``; the modules of ``watched`` loaded when it exits
    (read at exit, so a command ending with SystemExit is listed too), and the finished process."""
    probe = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: print('loaded:', json.dumps(sorted(m for m in {watched!r} if m in sys.modules))))\n"
        f"{code}\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], check=False, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded: "), result.stdout + result.stderr
    return json.loads(last.removeprefix("loaded: ")), result


def test_importing_the_engine_loads_numpy_only(tmp_path):
    loaded, result = run_and_list_loaded("import dpbench.engine", tmp_path, HEAVY + HYDRA)
    assert result.returncode == 0, result.stderr
    assert loaded == []


def test_help_loads_neither_hydra_nor_numpy(tmp_path):
    code = "sys.argv = ['dpbench', '--help']\nfrom dpbench.cli import main\nmain()"
    loaded, result = run_and_list_loaded(code, tmp_path, (*HEAVY, *HYDRA, "numpy", "yaml"))
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout and "config groups" in result.stdout
    assert loaded == []


REFUSED = [
    (["privacy.eps=-1"], "privacy.eps must be finite and > 0, got -1.0"),
    (["algorithm=nope"], "unknown algorithm 'nope'"),
    (["reps=0"], "reps must be ≥ 1, got 0"),
    (["+foo=1"], "foo is not a dpbench setting"),
]


@pytest.mark.parametrize(("args", "message"), REFUSED, ids=[" ".join(args) for args, _ in REFUSED])
def test_a_refused_configuration_is_answered_before_the_engine_loads(tmp_path, args, message):
    """Settings outside the dataset, model and algorithm groups are checked before the registries and the engine."""
    code = f"sys.argv = ['dpbench', *{args!r}]\nfrom dpbench.cli import main\nmain()"
    loaded, result = run_and_list_loaded(code, tmp_path, (*HEAVY, "dpbench.engine", "dpbench.algorithms.registry"))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert loaded == []


def test_a_bad_hyper_parameter_is_answered_without_scikit_learn(tmp_path):
    """A refusal that needs the algorithm registry (a hyper-parameter out of range) loads no solver:
    the baselines import scipy.optimize and scikit-learn when they first solve."""
    code = "sys.argv = ['dpbench', 'algorithm=dp_sgd', 'algorithm.clip=-1']\nfrom dpbench.cli import main\nmain()"
    loaded, result = run_and_list_loaded(
        code, tmp_path, ("sklearn", "pandas", "pyarrow", "matplotlib", "dpbench.engine")
    )
    assert result.returncode == 2 and "clip must be a finite number > 0, got -1" in result.stderr, result.stderr
    assert loaded == []


@pytest.mark.parametrize("args", [["algorithm=nope"], ["-m", "dataset=adult,bnak", "privacy.eps=1,2"]])
def test_a_misspelt_group_option_is_answered_before_hydra_loads(tmp_path, args):
    """The commonest typo (a plain ``group=option``, or a sweep over plain options) is checked with the
    standard library alone: neither omegaconf nor Hydra is imported (``cli.check_plain_group_choices``)."""
    code = f"sys.argv = ['dpbench', *{args!r}]\nfrom dpbench.cli import main\nmain()"
    loaded, result = run_and_list_loaded(code, tmp_path, (*HEAVY, *HYDRA, "numpy", "yaml"))
    assert result.returncode == 2 and "valid choices:" in result.stderr, result.stderr
    assert loaded == []
    assert not any(tmp_path.iterdir())  # nothing written: no outputs/ directory


PLAIN_VALUES = [
    ("privacy.eps", "0", "privacy.eps must be finite and > 0, got 0.0"),
    ("privacy.eps", "1e5", "privacy.eps must be in [1e-06, 10000]"),
    ("privacy.eps", "NaN", "privacy.eps must be a number, got NaN"),
    ("privacy.delta", "2", "privacy.delta must be in (0, 1), got 2.0"),
    ("reps", "0", "reps must be ≥ 1, got 0"),
    ("reps", "1.5", "reps must be an integer, got 1.5"),
    ("cv.folds", "-2", "cv.folds must be ≥ 1, got -2"),
    ("seed", "99999999999999999999", "seed must be in [0, 2^63 − 1]"),
    ("seed", "1e30", "seed must be in [0, 2^63 − 1]"),
]


@pytest.mark.parametrize(("key", "value", "message"), PLAIN_VALUES, ids=[f"{k}={v}" for k, v, _ in PLAIN_VALUES])
def test_a_plain_bad_value_is_answered_before_hydra_loads_in_the_same_words(
    tmp_path, compose_run_config, key, value, message
):
    """``privacy.eps=0`` or ``reps=0`` is refused with the standard library alone (``cli.check_plain_values``),
    in the words of the composed configuration's own refusal."""
    code = f"sys.argv = ['dpbench', '{key}={value}']\nfrom dpbench.cli import main\nmain()"
    loaded, plain = run_and_list_loaded(code, tmp_path, (*HEAVY, *HYDRA, "numpy", "yaml"))
    assert plain.returncode == 2 and message in plain.stderr, plain.stderr
    assert loaded == []
    assert not any(tmp_path.iterdir())
    with pytest.raises(ConfigError) as composed:
        compose_run_config(f"{key}={value}")
    assert plain.stderr.strip() == f"dpbench: error: {composed.value}"
