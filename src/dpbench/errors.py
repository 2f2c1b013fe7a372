"""Exceptions that the command line turns into one-line messages (exit status 2)."""


class DpbenchError(Exception):
    """Base class: a problem the user can fix (bad config, missing data, …)."""


class ConfigError(DpbenchError):
    """A configuration value is invalid; the message names the key and the value."""


class BudgetError(ConfigError, ValueError):
    """The privacy budget (privacy.eps, privacy.delta) cannot pay for the method as configured (a
    ValueError too, for callers of the privacy functions)."""


class DataError(DpbenchError):
    """A dataset file is missing, unreadable or malformed; the message says what to put where."""


class ChecksumError(DataError):
    """A dataset file exists but its checksum does not match the pinned one."""


class PrivacyViolation(AssertionError):
    """A run spent more than its budget: a bug in an algorithm or an accountant, never a result."""


def caused_by_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C (``KeyboardInterrupt``) or follows from one through its chain of causes
    and contexts. Python turns a ``KeyboardInterrupt`` raised while an extension module initialises into
    ``ImportError: initialization failed`` whose ``__cause__`` it is (seen with SciPy's HiGHS wrapper);
    a job stopped so was interrupted, it did not fail."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False
