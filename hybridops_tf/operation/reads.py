"""What hyops reads from the engine around a run to know what happened (docs/contract.md: Statuses).

Read-only engine calls, apart from the run itself: the takeover of a stale `running`
record (its run's events and a fresh plan name what it may have created) and the convergence
check after a partial (`-target`, `-replace`, `-refresh-only`) apply.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hybridops_tf.base.errors import EngineError, Interrupted
from hybridops_tf.base.interrupts import name as signal_name
from hybridops_tf.engine import commands, features
from hybridops_tf.engine.runner import Engine
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry, SuspectOrphan
from hybridops_tf.record.objects import StateView, interrupted_run_orphans, resources_after_run, state_view
from hybridops_tf.runtime.run_folder import EarlierRun

if TYPE_CHECKING:
    from hybridops_tf.engine.state import StateSnapshot
    from hybridops_tf.record.stamp import StateStamp
    from hybridops_tf.store import RunRecords


def deleted_by_stale_run(store: RunRecords, key: str, previous: OperationRecord | None) -> frozenset[str]:
    """The ids whose delete a stale `running` record's own run completed: hyops died before
    its settle, but the relay wrote the engine's events, and a completed delete is proof the
    object is gone (record/gate.py). Empty for a settled record."""
    if previous is None or previous.status is not Status.RUNNING:
        return frozenset()
    from hybridops_tf.engine.progress import ResourceTracker

    progress = ResourceTracker().feed_all(EarlierRun.read(store, key, previous.run_id).events).resources
    return frozenset(i for p in progress.values() for i in p.deleted_ids if i)


def takeover(
    store: RunRecords, key: str, previous: OperationRecord | None, engine: Engine
) -> tuple[list[SuspectOrphan], dict[str, ResourceEntry] | None]:
    """A stale `running` record: creates its run started and the state does not hold, and
    what the record knows once that run's events are merged in (its completed creates and
    deletes are evidence too: a destroy whose settle write failed did delete its objects).

    hyops died while that run's engine may still have been creating things; without this,
    a later verified destroy could say `destroyed` while such an object lives on. When hyops
    read none of that run's plan, a fresh read-only plan names what it may have created.
    """
    if previous is None or previous.status is not Status.RUNNING:
        return [], None
    from hybridops_tf.engine.progress import ResourceTracker
    from hybridops_tf.engine.state import StateFormatError, parse_state

    earlier = EarlierRun.read(store, key, previous.run_id)
    events = earlier.events
    progress = ResourceTracker().feed_all(events).resources
    in_state: StateView | None
    try:
        in_state = state_view(parse_state(engine.show_state_doc()).resources)
    except (EngineError, StateFormatError):
        in_state = None  # unreadable state: every started create stays a suspect
    replanned: tuple[str, ...] | None = ()
    if earlier.may_hold_unseen_creates(previous.active_command):
        replanned = planned_creates(engine)
    orphans = interrupted_run_orphans(progress, in_state, previous.run_id, replanned,
                                      known=previous.resources, stream_complete=earlier.complete)
    return orphans, resources_after_run(previous.resources, progress, in_state)


def planned_creates(engine: Engine) -> tuple[str, ...] | None:
    """Creates a read-only `plan -refresh=false` shows; None when it cannot say."""
    from hybridops_tf.engine.events import iter_events
    from hybridops_tf.engine.progress import planned_creates as fold

    lines: list[str] = []
    argv = engine.argv(commands.plan, None, extra=["-refresh=false"])
    result = engine.stream(argv, lines.append, None, lambda _line: None)
    if result.interrupted is not None:
        raise Interrupted(f"interrupted by {signal_name(result.interrupted)} while planning; nothing was changed")
    if result.returncode != 0:
        return None
    return fold(iter_events(lines))


# OpenTofu's -exclude (1.9), -target-file and -exclude-file (1.10) narrow a run as -target does
PARTIAL_RUN_FLAGS = ("-target", "-replace", "-refresh-only", "-exclude", "-target-file", "-exclude-file",
                     "-invoke")  # -invoke: the action alone, none of the configuration's changes


def partial_run_flags(passthrough: Sequence[str]) -> list[str]:
    """The engine flags in `passthrough` that make an apply touch less than the configuration
    (PARTIAL_RUN_FLAGS, with one dash or two, `=VALUE` or not)."""
    found = []
    for arg in passthrough:
        if arg == "--":
            break
        name = commands.flag_name(arg)
        if name in PARTIAL_RUN_FLAGS:
            found.append(name)
    return list(dict.fromkeys(found))


def unconverged(engine: Engine, flags: Sequence[str]) -> str | None:
    """Why the whole configuration has not converged after a partial run (None: it has).

    One read-only `plan -refresh=false` without the partial flags: any change it shows is
    work the targeted run left undone. A plan that fails is no proof of convergence."""
    from hybridops_tf.engine.events import ChangeSummary, iter_events

    lines: list[str] = []
    result = engine.stream(engine.argv(commands.plan, None, extra=["-refresh=false"]),
                           lines.append, None, lambda _line: None)
    applied_with = " ".join(flags)
    if result.interrupted is not None or result.returncode != 0:
        return (f"applied with {applied_with}; the plan that checks the rest of the configuration "
                f"failed (exit {result.returncode}), so convergence is not shown")
    summaries = [e for e in iter_events(lines) if isinstance(e, ChangeSummary)]
    if not summaries:
        return f"applied with {applied_with}; the check plan reported no change summary"
    last = summaries[-1]
    if last.add or last.change or last.remove:
        return (f"applied with {applied_with}; a plan of the whole configuration still shows "
                f"{last.add} to add, {last.change} to change, {last.remove} to destroy: run "
                f"the apply without {applied_with} to converge")
    return None


# After a run that exited 0 the state used to be read back with `show -json`: a second engine
# process per module (0.4-1.5 s on 2 cores), on a stack destroy's critical path once per
# member, and once per module in every reconcile (half again the engine work of its
# refresh-only plan). With the implicit local backend that state is the file the engine has just written,
# so reading it is the same evidence without the process. It is trusted only when this run
# wrote it and only where the engine keeps state there; anything else (a backend or `cloud` set
# up by init, -state or TF_DATA_DIR, an unknown or encrypted format) still asks `show -json`.
_STATE_FILE_FLAGS = frozenset({"-state", "-state-out"})  # a state file of the user's choosing


def local_state(engine: Engine, passthrough: Sequence[str] = (), since: float | None = None) -> StateSnapshot | None:
    """The module's local state file as the engine keeps it (written at or after `since`, when
    given), else None: kept elsewhere, missing, or a format we do not read."""
    from hybridops_tf.engine.state import StateFormatError, parse_local_state
    from hybridops_tf.record.stamp import local_state_path

    if _state_kept_elsewhere(engine, passthrough):
        return None
    path = local_state_path(engine.module_dir, engine.env.get("TF_WORKSPACE"))
    try:
        if since is not None and path.stat().st_mtime < since:
            return None  # not written by this run (started_at is whole seconds)
        return parse_local_state(path.read_bytes(), features.key_spelling(engine.info))
    except (OSError, ValueError, RecursionError, StateFormatError):
        return None  # a format we do not read: `show -json` says


def _state_kept_elsewhere(engine: Engine, passthrough: Sequence[str]) -> bool:
    """The engine may keep this module's state somewhere other than its local state file."""
    if (engine.module_dir / ".terraform" / "terraform.tfstate").exists():
        return True  # init configured a backend (or `cloud`): the state is not the local file
    env = {**os.environ, **engine.env}
    if "TF_DATA_DIR" in env:
        return True
    args = list(passthrough)
    for name, value in env.items():
        if name.startswith("TF_CLI_ARGS"):
            try:
                args += shlex.split(value)  # the engine splits these as shell words
            except ValueError:
                return True  # words we cannot split: they may name a state file
    return any(commands.flag_name(arg) in _STATE_FILE_FLAGS for arg in args)


def state_stamp(engine: Engine, passthrough: Sequence[str] = ()) -> StateStamp | None:
    """Who wrote the state last (its lineage, serial and objects): the local state file where
    the engine keeps it there, else `state pull`; None when neither can be read."""
    from hybridops_tf.record.stamp import StampFormatError, cheap_stamp, parse_state_stamp

    if not _state_kept_elsewhere(engine, passthrough):
        stamp = cheap_stamp(engine.module_dir, engine.env.get("TF_WORKSPACE"), {**os.environ, **engine.env})
        if stamp is not None:
            return stamp
    try:
        return parse_state_stamp(engine.capture_json(engine.argv(commands.state_pull)))
    except (EngineError, StampFormatError):
        return None
