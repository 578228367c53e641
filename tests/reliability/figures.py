"""Figures the reliability tests gather about themselves, for docs/reliability.md.

Each test notes what it really did (a kill point hit, a race run, a record checked, a fault
injected, a fuzz case tried) with `note(kind, **fields)`. When `HYOPS_RELIABILITY_LOG` names
a file (scripts/reliability.py sets it), every note is appended to it as one JSON line;
otherwise notes are dropped, so the suite runs the same under plain pytest.

Only what happened is noted: a kill attempt whose evidence shows it missed its phase is
noted as a miss, never as a hit.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from typing import Any

LOG_ENV = "HYOPS_RELIABILITY_LOG"

# Kinds of notes, each one table of the report.
KILL = "kill"  # a SIGKILL at a phase of apply/destroy/stack: {command, phase, hit, exact, ...}
RACE = "race"  # a concurrency scenario: {scenario, processes, rounds, mutations, refusals, ...}
RECORD = "record"  # a record checked after a kill/race/fault: {context, status, valid}
FAULT = "fault"  # a storage fault injected: {fault, command, exit_code, provider_called}
FUZZ = "fuzz"  # one hostile input case: {target}
SECURITY = "security"  # one security check: {check}
REFACTOR_SEQUENCE = "refactor_sequence"  # one refactor walk: {variant, seed, stuck, duplicated, ...}
REFACTOR_RUN = "refactor_run"  # one test's refactor walks: {variant, sequences, workers, seconds}
DRILL = "drill"  # one recovery drill scenario: {type, mode, orphan, person, rounds, commands}
WRITERS = "writers_sequence"  # one drill of other writers: {engine, seed, steps, families, followed, shrunk}
SIGNAL = "signal"  # one drilled SIGINT/SIGTERM: {signal, inherited, delay, moment, exit_code, recovered}


def note(kind: str, **fields: Any) -> None:
    """Append one figure (a JSON line) to $HYOPS_RELIABILITY_LOG, if set."""
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    line = json.dumps({"kind": kind, "at": time.time(), "test": _current_test(), **fields},
                      sort_keys=True, default=str) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def _current_test() -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.rsplit(" ", 1)[0] if current else ""
