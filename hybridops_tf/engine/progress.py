"""The fold of an engine run's events into per-resource progress (docs/contract.md: The record, Statuses).

Why separate from events.py: parsing says what one line means; this says what a whole
stream proves about each resource: the record's `resources` (complete/error/pending) and
its `suspect_orphans` (creates that started). Pure, linear, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine.events import (
    ActionMessage,
    ApplyComplete,
    ApplyErrored,
    ApplyProgress,
    ApplyStart,
    ChangeSummary,
    Diagnostic,
    Event,
    PlannedChange,
    RefreshComplete,
    RefreshStart,
    ResourceDrift,
    _ResourceMessage,
)
from hybridops_tf.engine.vocabulary import CREATE_ACTIONS, Progress, is_ephemeral_address


@dataclass(frozen=True, slots=True)
class ResourceProgress:
    """What the stream proves about one address. `action` is the last action the engine
    reported for it (a replace shows as delete then create); `planned_action` what was planned."""

    address: str
    status: Progress
    action: str
    planned_action: str | None = None
    reason: str | None = None
    id_key: str | None = None
    id_value: str | None = None
    elapsed_seconds: float | None = None
    prior_ids: tuple[str, ...] = ()  # objects this address held as the run began (refresh, deletes)
    deleted_ids: tuple[str, ...] = ()  # objects whose delete this run saw complete
    deleting_ids: tuple[str, ...] = ()  # objects whose delete this run started (completed or not)
    previous_address: str | None = None  # a `moved` block's `from`: the object's address before
    importing_id: str | None = None  # an `import` block's id: the object the plan adopts here
    condition_failed: bool = False  # a pre/postcondition of this resource failed in the run


class ResourceTracker:
    """Pure, linear fold of events into `{address: ResourceProgress}`.

    Feed events as they arrive (live progress) or all at once; each event costs one dict
    lookup. Rules: planned_change -> pending (never downgrades a started resource);
    apply_start -> started; apply_complete -> complete, or destroyed for a delete;
    apply_errored -> error. A create_before_destroy replace completes its create before the
    deposed object's delete: that delete (after a create of the same address in this run) is
    another object's, so it leaves the address's progress as the create left it (complete,
    `create`, the new id), whether it completes, fails or is cut short; only the ids it
    retires are noted. The deposed object's own fate is the state's to tell (its entry). An
    error diagnostic pointing into a resource
    block whose instance completed in this run (a failed postcondition: the object was made,
    then judged) makes that instance `error`; its id stays. An action's failure is not its
    triggering resource's: the engine's diagnostic for it points into the resource block (the
    `action_trigger`) with the `action_errored` error text as its detail, and leaves the
    resource as its own call left it (the action's row says it failed: record/actions.py).
    """

    __slots__ = ("_by_addr", "_created", "_refreshed", "_deleting", "_deletes_done", "_read", "_blocks", "_judged",
                 "_action_errors", "_gone")

    def __init__(self) -> None:
        self._by_addr: dict[str, ResourceProgress] = {}
        self._created: set[str] = set()
        self._refreshed: dict[str, str] = {}  # address -> id read by the run's refresh
        self._deleting: dict[str, list[str]] = {}  # address -> ids whose delete started, unsettled
        self._deletes_done: dict[str, int] = {}  # address -> deletes completed of those
        self._read: dict[str, None] = {}  # addresses whose object the run asked the provider about
        # (type, name) -> its instance addresses, in order (a dict: membership is one lookup,
        # where a list's would scan every instance of a counted block)
        self._blocks: dict[tuple[str, str], dict[str, None]] = {}
        # Blocks an error diagnostic naming only the block has judged, with no event about any
        # of their instances since: judging one again changes nothing (see _condition_failed),
        # so a diagnostic per instance (a postcondition every instance failed) costs one scan.
        self._judged: set[tuple[str, str]] = set()
        self._action_errors: set[str] = set()  # error texts of the actions that errored in the run
        self._gone: dict[str, None] = {}  # addresses whose object the run's refresh found deleted (drift)

    def feed(self, event: Event) -> ResourceProgress | None:
        """Fold one event; returns the address's new progress, or None if it is not about one."""
        if isinstance(event, Diagnostic):
            return None if event.detail in self._action_errors else self._condition_failed(event)
        if isinstance(event, ActionMessage):
            if event.type == "action_errored" and event.error:
                self._action_errors.add(event.error)
            return None
        if not isinstance(event, _ResourceMessage) or not event.resource.addr:
            return None
        addr = event.resource.addr
        if is_ephemeral_address(addr):
            return None  # an ephemeral resource lives for one run, never in state: never an object
        block = (event.resource.resource_type, event.resource.resource_name)
        if block[0]:
            self._blocks.setdefault(block, {})[addr] = None
            self._judged.discard(block)
        cur = self._by_addr.get(addr)
        new: ResourceProgress
        if isinstance(event, ResourceDrift) and event.action == "delete":
            self._gone[addr] = None
            return cur
        if isinstance(event, RefreshStart):
            self._read[addr] = None
            return cur
        if isinstance(event, RefreshComplete):
            self._read[addr] = None
            if event.id_value and cur is None:
                self._refreshed[addr] = event.id_value
            return cur
        if isinstance(event, PlannedChange):
            if cur is not None and cur.status is not Progress.PENDING:
                return cur
            refreshed = self._refreshed.get(addr)
            new = ResourceProgress(
                addr, Progress.PENDING, event.action, event.action, event.reason,
                prior_ids=(refreshed,) if refreshed else (),
                previous_address=event.previous_addr if event.previous_addr != addr else None,
                importing_id=event.importing_id,
            )
        elif isinstance(event, ApplyStart):
            # the deposed half of a create_before_destroy: another object than the new one here
            deposed = event.action == "delete" and addr in self._created
            if event.action == "delete" and event.id_value:
                self._deleting.setdefault(addr, []).append(event.id_value)
                cur = _with_prior(cur, addr, event.id_value)
            if deposed and cur is not None:
                new = cur
            else:
                id_key = None if event.action == "create" else event.id_key
                id_value = None if event.action == "create" else event.id_value
                new = _set(cur, addr, Progress.STARTED, event.action, id_key, id_value)
        elif isinstance(event, ApplyProgress):
            if cur is not None and cur.status is not Progress.PENDING:
                if cur.status is not Progress.STARTED:
                    return cur  # a late tick never reopens a finished resource
                new = replace(cur, elapsed_seconds=event.elapsed_seconds)
            else:
                new = _set(cur, addr, Progress.STARTED, event.action, elapsed_seconds=event.elapsed_seconds)
        elif isinstance(event, ApplyComplete):
            status = Progress.COMPLETE
            if event.action == "delete" and addr not in self._created:
                status = Progress.DESTROYED
            elif event.action == "create":
                self._created.add(addr)
            if event.action == "delete" and addr in self._created and cur is not None:
                new = cur  # the deposed object's delete: the new object's progress stands
            else:
                new = _set(cur, addr, status, event.action, event.id_key, event.id_value,
                           elapsed_seconds=event.elapsed_seconds)
            for gone in self._deletes_completed(addr) if event.action == "delete" else ():
                if gone not in new.deleted_ids:
                    new = replace(new, deleted_ids=(*new.deleted_ids, gone))
        elif isinstance(event, ApplyErrored):
            if event.action == "delete" and addr in self._created and cur is not None:
                return cur  # the deposed object's delete failed: the state keeps it, as its own entry
            new = _set(cur, addr, Progress.ERROR, event.action, elapsed_seconds=event.elapsed_seconds)
        else:
            return cur  # refresh and drift messages say nothing about this run's mutations
        self._by_addr[addr] = new
        return new

    def _deletes_completed(self, addr: str) -> list[str]:
        """The ids a delete completion at `addr` retires. The stream names the address, not the
        object: a replace's old object and a deposed one can be deleted at once. One delete in
        flight is that one; of several, none is retired until all have completed (an error on
        one leaves every id live, which never claims less than may remain)."""
        started = self._deleting.get(addr, [])
        done = self._deletes_done.get(addr, 0) + 1
        if done < len(started):
            self._deletes_done[addr] = done
            return []
        self._deleting.pop(addr, None)
        self._deletes_done.pop(addr, None)
        return started

    def engine_succeeded(self) -> None:
        """The engine exited 0, so every delete it started completed, reported or not (Terraform
        1.11 sends no apply_complete for a deposed object's delete): retire them all."""
        for addr, started in self._deleting.items():
            cur = self._by_addr[addr]
            gone = tuple(i for i in started if i not in cur.deleted_ids)
            self._by_addr[addr] = replace(cur, deleted_ids=(*cur.deleted_ids, *gone))
        self._deleting.clear()
        self._deletes_done.clear()

    def _condition_failed(self, diag: Diagnostic) -> ResourceProgress | None:
        """An error about a resource whose object this run made or changed: `error`, id kept.

        The engine names the instance (`address`) or only the block (`resource "T" "N"`, as for
        a failed postcondition); a block's instances that completed in this run all count.
        """
        if not diag.is_error:
            return None
        if diag.address:
            candidates: Iterable[str] = (diag.address,)
        else:
            block = diag.resource_block
            if block is None or block in self._judged:
                return None  # no block, or judged already: its instances are as that left them
            self._judged.add(block)
            candidates = self._blocks.get(block, {})
            if any(self._by_addr[a].status in (Progress.ERROR, Progress.STARTED)
                   for a in candidates if a in self._by_addr):
                return None  # an instance of the block failed its call: the error is that one's
        last = None
        for addr in candidates:
            cur = self._by_addr.get(addr)
            if cur is not None and cur.status is Progress.COMPLETE and cur.action in ("create", "update"):
                last = self._by_addr[addr] = replace(cur, status=Progress.ERROR, condition_failed=True)
        return last

    def feed_all(self, events: Iterable[Event]) -> ResourceTracker:
        for event in events:
            self.feed(event)
        return self

    @property
    def gone_on_refresh(self) -> tuple[str, ...]:
        """Addresses whose object the run's refresh found deleted outside the engine (a
        `resource_drift` delete): the provider said it no longer has it."""
        return tuple(self._gone)

    @property
    def read_addresses(self) -> tuple[str, ...]:
        """Addresses the run refreshed: the provider was asked whether their object lives."""
        return tuple(self._read)

    @property
    def resources(self) -> Mapping[str, ResourceProgress]:
        """Read-only view, in the order addresses first appeared."""
        return MappingProxyType(self._by_addr)


def _with_prior(cur: ResourceProgress | None, addr: str, ident: str) -> ResourceProgress:
    """`cur` knowing that `ident` was at `addr` before this run started deleting it."""
    if cur is None:
        return ResourceProgress(addr, Progress.PENDING, "delete", prior_ids=(ident,), deleting_ids=(ident,))
    if ident not in cur.deleting_ids:
        cur = replace(cur, deleting_ids=(*cur.deleting_ids, ident))
    if ident in cur.prior_ids:
        return cur
    return replace(cur, prior_ids=(*cur.prior_ids, ident))


def _set(
    cur: ResourceProgress | None,
    addr: str,
    status: Progress,
    action: str,
    id_key: str | None = None,
    id_value: str | None = None,
    elapsed_seconds: float | None = None,
) -> ResourceProgress:
    """Advance `cur`, keeping what the plan said and the last id known when none is given, and
    its elapsed time when none is given. One copy per event: the fold of a large run makes one
    for each of its events."""
    if cur is None:
        return ResourceProgress(addr, status, action, id_key=id_key, id_value=id_value,
                                elapsed_seconds=elapsed_seconds)
    if id_value is None and action != "create":
        id_key, id_value = cur.id_key, cur.id_value
    if elapsed_seconds is None:
        elapsed_seconds = cur.elapsed_seconds
    return replace(cur, status=status, action=action, id_key=id_key, id_value=id_value,
                   elapsed_seconds=elapsed_seconds)


def plan_was_read(events: Iterable[Event]) -> bool:
    """True when a stream holds its whole plan (the engine prints it before any change)."""
    return any((isinstance(e, ChangeSummary) and e.operation == "plan") or isinstance(e, ApplyStart)
               for e in events)


def run_succeeded(events: Iterable[Event]) -> bool:
    """True when the stream says the apply/destroy finished: the engine's closing change
    summary (`Apply complete!`, `Destroy complete!`), which it prints only on success."""
    return any(isinstance(e, ChangeSummary) and e.operation in ("apply", "destroy") for e in events)


def planned_creates(events: Iterable[Event]) -> tuple[str, ...] | None:
    """The addresses a plan's stream will create (create or replace), in plan order; None when
    its change summary counts more additions than it named (the creates cannot be named)."""
    creates: dict[str, None] = {}
    added = 0
    for event in events:
        if isinstance(event, PlannedChange) and event.action in CREATE_ACTIONS and event.addr:
            creates[event.addr] = None
        elif isinstance(event, ChangeSummary) and event.operation in ("plan", ""):
            added = event.add
    return None if added > len(creates) else tuple(creates)
