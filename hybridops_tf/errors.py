"""Errors that carry their exit code (docs/contract.md: Exit codes).

The core raises these; only the CLI entry point turns them into a message and an exit
code. Anything else that escapes is a bug and keeps its traceback. The root class and the
engine's own kinds come from hybridops_tf.engine.errors (the engine layer raises them and
imports nothing above it); they are named here too, so callers import every error from one
place.
"""

from __future__ import annotations

from enum import IntEnum

from hybridops_tf.engine.errors import EngineError, EngineNotFound, EngineNotStarted, HyopsError

__all__ = [
    "EngineError",
    "EngineNotFound",
    "EngineNotStarted",
    "ExitCode",
    "HyopsError",
    "Interrupted",
    "OperationFailed",
    "RefusedError",
    "UsageError",
]


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # the operation ran and failed; the outcome may be partial
    USAGE = 2  # usage or input error, nothing changed
    INCONSISTENT = 3  # reconcile/status found inconsistencies
    REFUSED = 4  # refused before mutation, nothing changed
    INTERRUPTED = 130


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
