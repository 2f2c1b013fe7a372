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
