"""Errors that carry their exit code (docs/contract.md: Exit codes).

Every layer raises these, the engine layer included (no engine, cannot start it, output it
cannot read); only the CLI entry point turns them into a one-line message and an exit code.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # the operation ran and failed; the outcome may be partial
    USAGE = 2  # usage or input error, nothing changed
    INCONSISTENT = 3  # reconcile/status found inconsistencies
    REFUSED = 4  # refused before mutation, nothing changed
    INTERRUPTED = 130


class HyopsError(Exception):
    """Base class: a user-facing failure with a one-line message."""

    exit_code: int = ExitCode.FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(HyopsError):
    """Bad arguments or input files; nothing was changed."""

    exit_code = ExitCode.USAGE


class RefusedError(HyopsError):
    """Refused before any mutation (lock busy, record not writable, uncertain outcome)."""

    exit_code = ExitCode.REFUSED


class OperationFailed(HyopsError):
    """The operation ran and failed; the record says what is known."""

    exit_code = ExitCode.FAILED


class Interrupted(HyopsError):
    """SIGINT/SIGTERM reached hyops; the engine was stopped and the record settled."""

    exit_code = ExitCode.INTERRUPTED


class EngineError(HyopsError):
    """The engine could not be found, run, or understood (preflight failures)."""

    exit_code = ExitCode.FAILED


class EngineInitFailed(EngineError):
    """The engine's `init` failed: it changes no state, so an apply or destroy it stops is a
    refusal (exit 2 and `last_attempt`, operation/steps.py); elsewhere a preflight failure."""


class EngineNotFound(EngineError):
    """No engine by the order, or the one named cannot run: a set-up error, nothing ran."""

    exit_code = ExitCode.USAGE


class EngineNotStarted(EngineError):
    """The engine process could not be spawned: it never ran, so nothing changed."""
