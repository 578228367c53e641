"""The run folder of one command on one module (docs/contract.md: Files under the runtime root).

meta.json is written first and result.json last, so `result.json` existing means the run
finished; events.jsonl gets each engine line as it arrives, before it is parsed. What
result.json says is run_result.py's, loaded only once a run ends (start-up cost). RunLife is
that order, the one every command that keeps a run folder follows (apply/destroy, plan, the
reconcile runs that change a record).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from hybridops_tf import __version__
from hybridops_tf.base import notices, numbers
from hybridops_tf.base.files import atomic_write_text, ensure_dir, open_append
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.base.redact import redact_argv
from hybridops_tf.record import layout
from hybridops_tf.record.lifecycle import Command
from hybridops_tf.record.model import Owner, utc_now

if TYPE_CHECKING:
    from hybridops_tf.engine.binary import EngineInfo
    from hybridops_tf.engine.census import StreamCensus
    from hybridops_tf.record.address import ModuleTarget
    from hybridops_tf.runtime.run_result import RunResult
    from hybridops_tf.store import RunRecords

SCHEMA_VERSION = 1
# Created by the event relay (engine/relay.py) once events.jsonl holds everything the
# engine wrote to its stdout, to EOF: even when hyops died first.
EVENTS_COMPLETE = "events.complete"


def run_path(runtime_root: Path, module_ref: str, run_id: str) -> Path:
    """`<runtime_root>/runs/<module_id>/<run_id>` (docs/contract.md: Files under the runtime root)."""
    return layout.run_dir(runtime_root, module_ref, run_id)


def new_run_id(command: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{command}-{stamp}-{os.urandom(4).hex()}"


def _dump(doc: dict[str, Any]) -> str:
    return numbers.dumps({"schema_version": SCHEMA_VERSION, **doc}, indent=2, default=str) + "\n"


@dataclass
class RunMeta:
    """meta.json of a module run or a plan, in its keys' order. The engine is known once
    preflight found it; RunFolder.finish adds `finished_at` and `exit_code` after these."""

    command: Command
    argv: list[str]  # redacted: a secret or ephemeral value given with `-var` never reaches the disk
    module_ref: str
    module_dir: str
    run_id: str
    workspace: str | None
    started_at: str
    hyops_version: str
    python: str
    pid: int
    host: str
    user: str
    engine: EngineInfo | None = None

    @classmethod
    def start(cls, command: str, argv: Sequence[str], target: ModuleTarget, workspace: str | None,
              run_id: str, sensitive_names: frozenset[str], ephemeral_names: frozenset[str] = frozenset()) -> RunMeta:
        owner = Owner.current(run_id)
        return cls(
            command=Command(command), argv=redact_argv(list(argv), sensitive_names, ephemeral_names),
            module_ref=target.ref,
            module_dir=str(target.directory), run_id=run_id, workspace=workspace, started_at=utc_now(),
            hyops_version=__version__, python=".".join(map(str, sys.version_info[:3])),
            pid=owner.pid, host=owner.host, user=owner.user,
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "engine"}
        doc["command"] = self.command.value
        if self.engine is not None:
            doc["engine"] = self.engine.to_json()
        return doc


@dataclass
class RunFolder:
    path: Path
    run_id: str

    @classmethod
    def create(cls, runtime_root: Path, module_ref: str, run_id: str) -> RunFolder:
        path = run_path(runtime_root, module_ref, run_id)
        ensure_dir(path)
        from hybridops_tf.base import bugs

        bugs.remember_run_folder(path)  # a bug's trace goes beside the run it broke
        return cls(path, run_id)

    @property
    def events_path(self) -> Path:
        return self.path / "events.jsonl"

    @property
    def stderr_path(self) -> Path:
        return self.path / "engine.stderr.log"

    @property
    def events_complete_path(self) -> Path:
        return self.path / EVENTS_COMPLETE

    @property
    def resolved_inputs_path(self) -> Path:
        return self.path / "resolved.inputs.yml"

    @property
    def result_path(self) -> Path:
        return self.path / "result.json"

    # A run folder is the run's story, not the record: its files are replaced atomically (a
    # reader never sees half of one) but not flushed to disk one by one. What must survive a
    # machine crash is the record (written durably before the engine may mutate and before
    # hyops reports) and the events the relay flushes before it marks them complete; a run
    # folder a crash cut short only under-proves (reconcile then treats its run as unknown).
    def write_meta(self, meta: dict[str, Any]) -> None:
        atomic_write_text(self.path / "meta.json", _dump(meta), durable=False)

    def write_text(self, name: str, text: str) -> Path:
        target = self.path / name
        atomic_write_text(target, text, durable=False)
        return target

    def write_census(self, census: StreamCensus | None) -> None:
        """`stream.unknown.json`: what the engine's stream carried beyond hyops's vocabulary
        (engine/census.py), only when it carried some. A failure is a warning: the counts
        explain, they decide nothing."""
        if not census:
            return
        from hybridops_tf.engine.census import CENSUS_FILE

        try:
            self.write_text(CENSUS_FILE, census.text())
        except OSError as err:
            notices.warning(f"cannot write {self.path / CENSUS_FILE}: {err.strerror or err}")

    def open_events(self) -> BinaryIO:
        return open_append(self.events_path)

    def write_result(self, result: dict[str, Any]) -> None:
        """Last write of a run: its presence means the run finished."""
        atomic_write_text(self.result_path, _dump({"finished_at": utc_now(), **result}), durable=False)

    def finish(self, meta: RunMeta, exit_code: int, result: RunResult) -> None:
        self.finish_docs(meta.to_json(), exit_code, result.to_json())

    def finish_docs(self, meta: Mapping[str, Any], exit_code: int, result: Mapping[str, Any]) -> None:
        """meta gets its end, then result.json is written last (its presence = run finished);
        a failure is a warning: the record already says what happened."""
        try:
            self.write_meta({**meta, "finished_at": utc_now(), "exit_code": exit_code})
            self.write_result({"run_id": self.run_id, "exit_code": exit_code, **result})
        except OSError as err:
            notices.warning(f"could not finish run folder {self.path}: {err}")


class MetaDoc(Protocol):
    """A run's meta.json as it stands (RunMeta, run_result.ReconcileMeta): read again at the
    close, so what the run learnt meanwhile (its engine) is in the final one."""

    def to_json(self) -> dict[str, Any]: ...


class RunJournal(Protocol):
    """The part of a store that journals a run's meta and result (store/__init__.py: Journals),
    for a runner that never sees this run folder; the local store's keeps nothing beyond it."""

    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None: ...
    def describe(self) -> str: ...


class RunNotOpened(Exception):
    """A run that could not be opened; nothing beyond it was written. `step`: "folder" (the
    run folder or its meta.json) or "journal" (the store's journal of its meta)."""

    def __init__(self, step: str, error: OSError) -> None:
        super().__init__(f"{step}: {error}")
        self.step = step
        self.error = error


# What a run that raised leaves as its end: (exit code, result.json's outcome), or None to
# write nothing (a crash or a bug leaves a folder without result.json, as a kill does).
Ending = Callable[[BaseException], tuple[int, Mapping[str, Any]] | None]


@dataclass
class RunLife:
    """One run folder's lifecycle. Open: the folder and meta.json first, then the store's
    journal of it (`journal` None: a run no store journals, a plan, which holds no lock).
    Close: meta.json gets its end and result.json is written last (its presence means the
    run finished), then the journal gets the result. A crash between two steps leaves the
    ones before it: a folder without result.json is a run that did not finish."""

    folder: RunFolder
    meta: MetaDoc
    key: str
    journal: RunJournal | None = None
    closed: bool = False

    @classmethod
    def open(cls, runtime_root: Path, key: str, run_id: str, meta: MetaDoc,
             journal: RunJournal | None) -> RunLife:
        """RunNotOpened when the folder, its meta.json or the journal's meta cannot be written."""
        try:
            folder = RunFolder.create(runtime_root, key, run_id)
        except OSError as err:
            raise RunNotOpened("folder", err) from None
        life = cls(folder, meta, key, journal)
        life._write_meta()
        life._journal_meta()
        return life

    def close(self, exit_code: int, result: Mapping[str, Any]) -> None:
        """result.json last, then the journal's result: a courtesy (the record already says
        what happened), so a failure of either is a warning."""
        self.closed = True
        self.folder.finish_docs(self.meta.to_json(), exit_code, result)
        self._journal_result(exit_code, result)

    def _write_meta(self) -> None:
        try:
            self.folder.write_meta(self.meta.to_json())
        except OSError as err:
            raise RunNotOpened("folder", err) from None

    def _journal_meta(self) -> None:
        if self.journal is None:
            return
        try:
            self.journal.journal_doc(self.key, self.folder.run_id, "meta", self.meta.to_json())
        except OSError as err:
            raise RunNotOpened("journal", err) from None

    def _journal_result(self, exit_code: int, result: Mapping[str, Any]) -> None:
        if self.journal is None:
            return
        try:
            self.journal.journal_doc(self.key, self.folder.run_id, "result", {"exit_code": int(exit_code), **result})
        except OSError as err:
            notices.warning(f"could not journal the result of {self.folder.run_id} in {self.journal.describe()}: "
                            f"{err.strerror or err}")

    @contextmanager
    def closing(self, ending: Ending) -> Iterator[RunLife]:
        """The body's run, closed with what `ending` makes of an exception it raises (unless
        the body closed it already); the exception goes on."""
        try:
            yield self
        except BaseException as err:
            end = None if self.closed else ending(err)
            if end is not None:
                self.close(*end)
            raise


@dataclass(frozen=True)
class EarlierRun:
    """An earlier run of a module, read once: its folder under the store's root, or (run on
    another machine) a shared store's journal of it. `events`: its parsed events.jsonl ([]
    when it left none); `complete`: they are the engine's whole stdout, to its end (the relay's
    events.complete, or a journal that saw the end), so a create the engine started is in them
    as an apply_start, whatever happened to hyops; `engine_spawned`: engine.stderr.log exists
    (opened right before the engine is spawned), None when there is no folder here."""

    events: list[Any]
    complete: bool
    engine_spawned: bool | None

    @classmethod
    def read(cls, store: RunRecords, module_ref: str, run_id: str) -> EarlierRun:
        from hybridops_tf.engine.events import iter_events

        folder = RunFolder(run_path(store.root, module_ref, run_id), run_id)
        journal = None
        try:
            lines: Sequence[str] = folder.events_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:  # not on this machine: a shared store's journal may hold the run
            journal = store.journal_lines(module_ref, run_id)
            lines = journal.lines if journal is not None else []
        events = list(iter_events(lines))
        if folder.path.is_dir():
            return cls(events, folder.events_complete_path.exists(), folder.stderr_path.exists())
        return cls(events, journal is not None and bool(journal.complete), None)

    def may_hold_unseen_creates(self, command: str | None) -> bool:
        """An interrupted apply whose engine was started but whose plan hyops never read: its
        events cannot name what the engine went on to create. Complete events are all the
        engine wrote (no plan in them, no create); a folder without engine.stderr.log saw no
        engine; without a folder here only a journal that saw the engine's end proves it."""
        from hybridops_tf.engine.progress import plan_was_read

        if command not in (None, "apply") or plan_was_read(self.events) or self.complete:
            return False
        return self.engine_spawned is not False


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
        """Flushed, not fsynced: the relay fsyncs a mutating run's events before it marks them
        complete (engine/relay.py); a plan's events prove nothing a crash could take back."""
        try:
            self._fh.flush()
        finally:
            self._fh.close()
