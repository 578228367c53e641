"""The engine's stdout as hyops reads it during a run: parsed, tracked, shown.

Kept apart from steps.py, which is the contract step by step; this is the per-line
consumer the process runner calls while the engine runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hybridops_tf.base import notices
from hybridops_tf.engine import process
from hybridops_tf.runtime.run_folder import EVENTS_COMPLETE, EventLog, RunFolder

if TYPE_CHECKING:  # the event parser is loaded once the engine runs
    from hybridops_tf.engine.census import StreamCensus
    from hybridops_tf.engine.events import Event, OutputsMessage
    from hybridops_tf.engine.progress import ResourceTracker
    from hybridops_tf.record.action_fold import ActionFold
    from hybridops_tf.record.actions import ActionRow
    from hybridops_tf.store import Journal


class StreamReader:
    """The engine's stdout, line by line, as the event relay forwards it: each line is
    already in events.jsonl (the relay writes it first, redacted; engine/relay.py, which
    also keeps draining the engine into it if hyops dies), then parsed, tracked and shown.

    The event parser (its ~25 message classes) is imported at the first line, which comes
    after the spawn: the import then overlaps the engine's own start-up instead of adding to
    hyops's overhead before it (issue #3's budget). So is what result.json is made of
    (runtime/run_result.py), needed only once the engine has exited.
    """

    def __init__(self, on_event: Callable[[Event], None] | None, folder: RunFolder, log: EventLog,
                 journal: Journal | None = None, planned_actions: Sequence[ActionRow] = ()) -> None:
        self._on_event = on_event
        self._folder = folder
        self._log = log
        self._journal = journal
        self._tracker: ResourceTracker | None = None
        self._actions: ActionFold | None = None
        self._planned_actions = planned_actions  # a saved plan's (operation/request.py)
        self.diagnostics: list[Event] = []
        self.outputs: list[OutputsMessage] = []
        self.log_error: list[OSError] = []
        self._census: StreamCensus | None = None

    def census(self) -> StreamCensus:
        """What the stream carried beyond hyops's vocabulary (engine/census.py)."""
        if self._census is None:
            from hybridops_tf.engine.census import StreamCensus

            self._census = StreamCensus()
        return self._census

    def write_census(self) -> None:
        """The counts of what was ignored, into the run folder, when there are any; a failure
        to write them is a warning (they explain, they decide nothing)."""
        self._folder.write_census(self._census)

    def journal(self) -> process.Journal:
        """For the relay: events.jsonl (opened before `running` was written) and, once the
        engine is spawned, a note of its pid in the run folder (see runtime/liveness.py)."""
        return process.Journal(events_fd=self._log.fileno(), on_spawn=self._note_engine,
                               complete_marker=self._folder.path / EVENTS_COMPLETE)

    def _note_engine(self, pid: int) -> None:
        import os

        from hybridops_tf.runtime import liveness

        if self._journal is not None:
            self._journal.engine_started(pid, os.uname().nodename)
        try:
            liveness.write_note(self._folder.path, pid, self._folder.run_id)
        except OSError as err:  # a courtesy for `status`; the run itself goes on
            notices.warning(f"cannot write {self._folder.path / liveness.NOTE_NAME}: {err.strerror or err}")

    def tracker(self) -> ResourceTracker:
        if self._tracker is None:
            from hybridops_tf.engine.progress import ResourceTracker

            self._tracker = ResourceTracker()
        return self._tracker

    def actions(self) -> ActionFold:
        """The run's action invocations (Terraform 1.14+), for the record's `actions`."""
        if self._actions is None:
            from hybridops_tf.record.action_fold import ActionFold

            self._actions = ActionFold(self._planned_actions)
        return self._actions

    def __call__(self, line: str) -> None:
        from hybridops_tf.engine.events import OutputsMessage, parse_event
        from hybridops_tf.engine.relay import LOG_ERROR, parse_notice
        from hybridops_tf.runtime import run_result  # noqa: F401  # the run's end needs it: loaded while the engine runs

        notice = parse_notice(line)
        if notice is not None:  # the relay's, not the engine's
            kind, errno, message = notice
            if kind == LOG_ERROR and not self.log_error:  # never stop an engine over our own log
                self.log_error.append(OSError(errno, message))
                notices.error(f"cannot append to {self._folder.events_path}: {message}; "
                              "the engine goes on, and the run will be recorded as error")
            return
        event = parse_event(line, self.census())
        if self._journal is not None and _journaled(event):
            self._journal.line(line, "event")
        self.tracker().feed(event)
        self.actions().feed(event)
        if isinstance(event, OutputsMessage):
            self.outputs.append(event)
        elif getattr(event, "type", "") == "diagnostic":
            self.diagnostics.append(event)
        if self._on_event is not None:
            self._on_event(event)


def _journaled(event: Event) -> bool:
    """What a shared store's journal keeps of the stream: what recovery folds (plans, starts,
    completions, errors, refreshes, the plan's summary, actions started and ended), not
    progress ticks or logs."""
    from hybridops_tf.engine.events import ActionMessage, ApplyProgress, ChangeSummary, _ResourceMessage

    if isinstance(event, ActionMessage):
        return event.type != "action_progress"
    return isinstance(event, ChangeSummary | _ResourceMessage) and not isinstance(event, ApplyProgress)
