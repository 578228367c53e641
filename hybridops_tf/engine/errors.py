"""The engine layer's errors, and the root of every hyops error (docs/contract.md: Exit codes).

Why here: the engine raises errors of its own (no engine, cannot start it, output it cannot
read) and imports nothing above its layer, yet every caller handles them as it handles the
core's: one `except HyopsError` turns any of them into a one-line message and an exit code.
So the root class lives at the bottom; hybridops_tf.errors names the exit codes (ExitCode)
and adds the core's kinds. The two codes used here are checked against ExitCode by a test.
"""

from __future__ import annotations


class HyopsError(Exception):
    """Base class: a user-facing failure with a one-line message."""

    exit_code: int = 1  # ExitCode.FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EngineError(HyopsError):
    """The engine could not be found, run, or understood (preflight failures)."""

    exit_code = 1  # ExitCode.FAILED


class EngineNotFound(EngineError):
    """No engine by the order, or the one named cannot run: a set-up error, nothing ran."""

    exit_code = 2  # ExitCode.USAGE


class EngineNotStarted(EngineError):
    """The engine process could not be spawned: it never ran, so nothing changed."""
