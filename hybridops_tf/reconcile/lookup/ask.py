"""Run one lookup command and keep what was asked and what answered.

Why through engine/process.py: it is hyops's one spawn point (no shell, its own session,
signals forwarded, killed with hyops); `run_capture`'s timeout kills a hung lookup with its
whole process group, so a hanging command costs its `timeout` and changes nothing.

Kept in the reconcile's run folder, per ask `N` (numbered in asking order):
    lookup.N.request.json   the JSON the command got on stdin
    lookup.N.stdout         what it printed (the answer, or the garbage)
    lookup.N.stderr.log     its stderr
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from hybridops_tf.base.errors import EngineError, Interrupted
from hybridops_tf.engine import process
from hybridops_tf.reconcile.lookup.protocol import AnswerError, LookupRequest, parse_answer
from hybridops_tf.reconcile.lookup.spec import LookupSpec
from hybridops_tf.reconcile.verdict import Candidate
from hybridops_tf.runtime.run_folder import RunFolder

_STDERR_SHOWN = 200  # characters of the command's last stderr line named in a finding


@dataclass(frozen=True)
class Answer:
    """A lookup's answer: its candidates, or why it failed (candidates None)."""

    candidates: tuple[Candidate, ...] | None
    why: str = ""
    seconds: float = 0.0
    unsupported: bool = False  # the source cannot list the type at all (query.py: an engine before 1.14)


def ask(spec: LookupSpec, request: LookupRequest, env: Mapping[str, str], folder: RunFolder | None,
        index: int) -> Answer:
    """Ask once; never raises for the command's own failures (they are the answer's `why`)."""
    stem = f"lookup.{index}"
    if folder is not None:
        folder.write_text(f"{stem}.request.json", request.stdin().decode("utf-8"))
    started = time.monotonic()
    try:
        captured = process.run_capture(spec.argv(), env=env, stdin_data=request.stdin(), timeout=spec.timeout,
                                       cwd=spec.folder)
    except EngineError as err:  # it could not be started (gone or not executable since validation)
        why = str(err.__cause__ or err.message)
        return Answer(None, f"it could not be started: {why}", time.monotonic() - started)
    seconds = time.monotonic() - started
    if folder is not None:
        folder.write_text(f"{stem}.stdout", captured.stdout)
        folder.write_text(f"{stem}.stderr.log", captured.stderr)
    if captured.interrupted is not None:
        raise Interrupted("interrupted while a lookup ran; nothing was changed")
    if captured.timed_out:
        return Answer(None, f"it did not answer within its timeout of {spec.timeout:g}s and was killed", seconds)
    if captured.returncode != 0:
        last = next((ln.strip() for ln in reversed(captured.stderr.splitlines()) if ln.strip()), "")
        said = f": {last[:_STDERR_SHOWN]}" if last else ""
        return Answer(None, f"it exited {captured.returncode}{said}", seconds)
    try:
        return Answer(parse_answer(captured.stdout), seconds=seconds)
    except AnswerError as err:
        return Answer(None, f"its answer is not valid: {err}", seconds)
