"""``python -m dpbench.audit``: the table, the parquet file, the exit statuses and determinism."""

from __future__ import annotations

import pandas as pd
import pytest

from dpbench.algorithms.registry import ALGORITHMS
from dpbench.audit import cli as audit_cli
from dpbench.audit import suite
from dpbench.audit.targets import laplace_target


def _table(out: str) -> str:
    return out.split("\n\nper-target confidence", maxsplit=1)[0]


def test_module_runs_prints_the_table_and_writes_parquet(cli, tmp_path):
    result = cli(
        ["--n", "20000", "--targets", "laplace,control_laplace_halved_noise", "--out", "r.parquet"],
        tmp_path,
        module="dpbench.audit",
    )
    assert result.returncode == 0, result.stderr
    header = result.stdout.splitlines()[0].split()
    assert header[:2] == ["mechanism", "claimed"] and "verdict" in header
    frame = pd.read_parquet(tmp_path / "r.parquet")
    assert frame["mechanism"].tolist() == ["laplace", "control_laplace_halved_noise"]
    assert frame["verdict"].tolist() == ["ok", "caught"] and frame["n"].tolist() == [20_000, 20_000]
    assert (frame["eps_lower_bound"] <= frame["eps_claimed"]).tolist() == [True, False]


def test_list_names_every_target_and_control(capsys):
    assert audit_cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in [*suite.TARGETS, *suite.CONTROLS])
    coverage = out[out.index("private algorithms and the targets auditing their releases") :].splitlines()[1:]
    listed = {line.split()[0]: line.split(None, 1)[1] for line in coverage}
    private = {name for name, cls in ALGORITHMS.items() if cls.private}
    assert set(listed) == private  # every private algorithm, each with at least one target of the suite
    assert all(
        any(target in suite.TARGETS for target in text.split("; not audited")[0].split(", "))
        for text in listed.values()
    )


def test_a_violating_target_exits_1(monkeypatch, capsys):
    broken = laplace_target(mechanism_epsilon=2.0, name="halved_as_target")
    monkeypatch.setitem(suite.TARGETS, "halved_as_target", lambda: broken)
    assert audit_cli.main(["--n", "20000", "--targets", "laplace,halved_as_target"]) == 1
    assert "halved_as_target" in capsys.readouterr().err


def test_a_missed_control_exits_1(monkeypatch, capsys):
    monkeypatch.setitem(suite.CONTROLS, "correct_as_control", lambda: laplace_target(name="correct_as_control"))
    assert audit_cli.main(["--n", "20000", "--targets", "correct_as_control"]) == 1
    assert "MISSED" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["--targets", "nope"], ["--n", "10"], ["--targets", ","]])
def test_bad_arguments_exit_2(args, capsys):
    assert audit_cli.main(args) == 2


def test_same_seed_same_table(capsys):
    args = ["--n", "20000", "--targets", "laplace,above_threshold_laplace,control_svt_lyu_alg5"]
    tables = []
    for seed in ("1", "1", "2"):
        assert audit_cli.main([*args, "--seed", seed]) == 0
        tables.append(_table(capsys.readouterr().out))
    assert tables[0] == tables[1] and tables[0] != tables[2]
