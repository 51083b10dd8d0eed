"""Errors a user can cause, each with a one-line message that says what to do.

The CLI turns any `PerftrackError` into ``error: <message>`` on stderr and the exit code
below; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

# Exit codes (documented in README.md).
EXIT_OK = 0
EXIT_FAILED_CELLS = 1  # the command ran, but some cells failed (see the run records)
EXIT_USER_ERROR = 2  # bad input: file, option, version, matrix, record
EXIT_ENVIRONMENT = 3  # the machine lacks something: sysbench, a library, a free port, disk
EXIT_DB = 4  # the DuckDB file is corrupt, locked, or has a newer schema
EXIT_INTERRUPTED = 130  # Ctrl-C / SIGTERM: finished cells kept, run marked interrupted


class PerftrackError(Exception):
    """An error the user can fix; ``str(err)`` is the one-line message."""

    exit_code = EXIT_USER_ERROR


class ConfigError(PerftrackError):
    """A bad config, matrix, catalog entry, option or input value."""


class EnvironmentProblem(PerftrackError):
    """Something missing or broken on this machine (not the user's input)."""

    exit_code = EXIT_ENVIRONMENT


class FetchError(EnvironmentProblem):
    """A server could not be downloaded, verified or extracted."""


class ServerError(EnvironmentProblem):
    """A server would not initialise, start, or answer."""


class ParseError(PerftrackError):
    """Tool output that perftrack cannot read; never guessed at."""


class RecordError(PerftrackError):
    """A run record that fails validation."""


class DatabaseError(PerftrackError):
    """The results DB is corrupt, locked, or has a schema this code cannot use."""

    exit_code = EXIT_DB


class Interrupted(PerftrackError):
    """The run was interrupted by a signal."""

    exit_code = EXIT_INTERRUPTED
