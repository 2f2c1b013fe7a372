"""Ctrl-C is an interruption, never a failure, even where Python hands it on as another exception."""

from __future__ import annotations

import pytest

from dpbench.cli import report_and_exit
from dpbench.engine import marks_failures
from dpbench.errors import DataError, caused_by_ctrl_c
from dpbench.results import ERROR_FILE


def _import_cut_short_by_ctrl_c() -> ImportError:
    """What Python raises when Ctrl-C lands while an extension module initialises."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise ImportError("initialization failed") from interrupt
    except ImportError as exc:
        return exc


def _raised_while_handling_ctrl_c() -> OSError:
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise OSError(5, "cleanup failed")  # noqa: B904 — the implicit context is what is tested
    except OSError as exc:
        return exc


def test_an_exception_follows_ctrl_c_through_its_cause_or_its_context_only():
    assert caused_by_ctrl_c(KeyboardInterrupt())
    assert caused_by_ctrl_c(_import_cut_short_by_ctrl_c())
    assert caused_by_ctrl_c(_raised_while_handling_ctrl_c())
    assert not caused_by_ctrl_c(ImportError("initialization failed"))
    assert not caused_by_ctrl_c(DataError("bad file"))
    chained = ValueError("outer")
    chained.__context__ = TypeError("inner")
    chained.__context__.__context__ = chained  # a cycle ends the walk
    assert not caused_by_ctrl_c(chained)


@pytest.mark.parametrize(
    ("make_exception", "recorded"),
    [(_import_cut_short_by_ctrl_c, False), (_raised_while_handling_ctrl_c, False), (lambda: ValueError("x"), True)],
)
def test_a_job_stopped_by_ctrl_c_leaves_no_failure_marker(tmp_path, make_exception, recorded):
    exception = make_exception()

    @marks_failures
    def job(plan, out_dir):
        raise exception

    with pytest.raises(type(exception)):
        job(None, tmp_path)
    assert (tmp_path / ERROR_FILE).exists() is recorded


def test_the_command_reports_an_import_cut_short_by_ctrl_c_as_an_interruption(capsys):
    with pytest.raises(SystemExit) as stopped:
        report_and_exit(_import_cut_short_by_ctrl_c(), [])
    assert stopped.value.code == 130
    err = capsys.readouterr().err
    assert err.startswith("dpbench: error: interrupted;"), err
    assert "Traceback" not in err


def test_a_companion_command_reports_an_import_cut_short_by_ctrl_c_as_an_interruption(capsys):
    from dpbench.console import console_command

    @console_command("dpbench-status")
    def main():
        raise _import_cut_short_by_ctrl_c()

    assert main() == 130
    assert capsys.readouterr().err == "dpbench-status: interrupted\n"
