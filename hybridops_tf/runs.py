"""The run folder of one command on one module (DESIGN §3).

meta.json is written first and result.json last, so `result.json` existing means the run
finished; events.jsonl gets each engine line as it arrives, before it is parsed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from hybridops_tf.fsutil import atomic_write_text, ensure_dir, open_append
from hybridops_tf.record import module_id, utc_now

SCHEMA_VERSION = 1
# Created by the event relay (engine/relay.py) once events.jsonl holds everything the
# engine wrote to its stdout, to EOF: even when hyops died first.
EVENTS_COMPLETE = "events.complete"


def run_path(runtime_root: Path, module_ref: str, run_id: str) -> Path:
    """`<runtime_root>/runs/<module_id>/<run_id>` (DESIGN §3)."""
    return runtime_root / "runs" / module_id(module_ref) / run_id


def new_run_id(command: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{command}-{stamp}-{os.urandom(4).hex()}"


def _dump(doc: dict[str, Any]) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, **doc}, indent=2, default=str) + "\n"


@dataclass
class RunFolder:
    path: Path
    run_id: str

    @classmethod
    def create(cls, runtime_root: Path, module_ref: str, run_id: str) -> RunFolder:
        path = run_path(runtime_root, module_ref, run_id)
        ensure_dir(path)
        return cls(path, run_id)

    @property
    def events_path(self) -> Path:
        return self.path / "events.jsonl"

    @property
    def stderr_path(self) -> Path:
        return self.path / "engine.stderr.log"

    @property
    def resolved_inputs_path(self) -> Path:
        return self.path / "resolved.inputs.yml"

    @property
    def result_path(self) -> Path:
        return self.path / "result.json"

    def write_meta(self, meta: dict[str, Any]) -> None:
        atomic_write_text(self.path / "meta.json", _dump(meta))

    def write_text(self, name: str, text: str) -> Path:
        target = self.path / name
        atomic_write_text(target, text)
        return target

    def open_events(self) -> BinaryIO:
        return open_append(self.events_path)

    def write_result(self, result: dict[str, Any]) -> None:
        """Last write of a run: its presence means the run finished."""
        atomic_write_text(self.result_path, _dump({"finished_at": utc_now(), **result}))


def read_run_events(runtime_root: Path, module_ref: str, run_id: str) -> list[Any]:
    """The parsed events.jsonl of an earlier run ([] when it left none)."""
    from hybridops_tf.engine.events import iter_events

    path = run_path(runtime_root, module_ref, run_id) / "events.jsonl"
    try:
        lines: Sequence[str] = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:  # not on this machine: a shared store's journal may hold the run
        journal = _journal(runtime_root, module_ref, run_id)
        lines = journal.lines if journal is not None else []
    return list(iter_events(lines))


def _journal(runtime_root: Path, module_ref: str, run_id: str) -> Any:
    from hybridops_tf.store import open_store

    return open_store(runtime_root).journal_lines(module_ref, run_id)


def may_hold_unseen_creates(runtime_root: Path, module_ref: str, run_id: str, command: str | None,
                            events: Sequence[Any]) -> bool:
    """An interrupted apply whose engine was started but whose plan hyops never read.

    Then its events cannot name what the engine went on to create. engine.stderr.log is
    opened right before the engine is spawned, so without it (in a run folder that is
    there) the engine never ran; a missing run folder proves nothing. With events.complete
    the events are all the engine wrote, to its end: no plan in them means no create.
    """
    from hybridops_tf.engine.progress import plan_was_read

    if command not in (None, "apply") or plan_was_read(events):
        return False
    folder = run_path(runtime_root, module_ref, run_id)
    if (folder / EVENTS_COMPLETE).exists():
        return False  # the events are the engine's whole stdout: no plan in them, no create
    if not folder.is_dir():  # run elsewhere: only a journal that saw the engine's end proves it
        journal = _journal(runtime_root, module_ref, run_id)
        return journal is None or not journal.complete
    return (folder / "engine.stderr.log").exists()


class EventLog:
    """Raw line first: append each engine stdout line to events.jsonl, flushed at once."""

    def __init__(self, folder: RunFolder) -> None:
        self._fh = folder.open_events()

    def append(self, line: str) -> None:
        self._fh.write(line.encode("utf-8") + b"\n")
        self._fh.flush()

    def fileno(self) -> int:
        """The open events.jsonl, for the event relay (engine/relay.py) to append to."""
        return self._fh.fileno()

    def close(self) -> None:
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
        finally:
            self._fh.close()
