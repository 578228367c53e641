"""Stack scheduling as a pure state machine, and the destroy ordering (docs/contract.md: Stacks).

No threads, processes or files here: the runner asks `start()` which members may begin,
reports each end with `finish()`, and reads `resolutions()` at the end. That keeps every
rule (pending is never failed, descendants of a failure are pending, stop after a failure
unless --continue-on-error, an interrupt starts nothing new) testable in microseconds.
Ordering comes from the standard library's graphlib, which also refuses cycles.
"""

from __future__ import annotations

import graphlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.stack.model import Member, Stack

# What counts as "this upstream succeeded" for its dependants to start.
APPLY_SUCCESS = frozenset({MemberStatus.OK, MemberStatus.SKIPPED})
# Destroy: a member may go once its dependants are gone or kept on purpose.
DESTROY_SUCCESS = frozenset({MemberStatus.DESTROYED, MemberStatus.ABSENT, MemberStatus.RETAINED})


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one member ended: blocked_by names the member that kept a pending one from starting."""

    status: MemberStatus
    blocked_by: str | None = None


class Scheduler:
    """Which members may start now, given what finished and how.

    dependencies maps each member to the members that must succeed before it starts.
    groups name members that must never run at the same time (one module directory used
    by several members through workspaces shares `.terraform`).
    """

    def __init__(
        self,
        dependencies: Mapping[str, Iterable[str]],
        *,
        parallelism: int = 4,
        continue_on_error: bool = False,
        success: Collection[MemberStatus] = APPLY_SUCCESS,
        order: Sequence[str] | None = None,
        groups: Mapping[str, str] | None = None,
    ) -> None:
        if parallelism < 1:
            raise ValueError("parallelism must be at least 1")
        self._deps = {name: tuple(ups) for name, ups in dependencies.items()}
        names = list(order) if order is not None else list(self._deps)
        self._rank = {name: i for i, name in enumerate(names)}
        for name in self._deps:
            self._rank.setdefault(name, len(self._rank))
        self._parallelism = parallelism
        self._continue = continue_on_error
        self._success = frozenset(success)
        self._groups = dict(groups or {})
        self._sorter = graphlib.TopologicalSorter(self._deps)
        self._sorter.prepare()  # graphlib.CycleError for a cyclic graph
        self._queue: list[str] = []
        self._running: set[str] = set()
        self._results: dict[str, Resolution] = {}
        self._first_failure: str | None = None
        self._interrupted = False
        self._pull()

    # --- queries ----------------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        """True once nothing new may start: an interrupt, or a failure without continue."""
        return self._interrupted or (self._first_failure is not None and not self._continue)

    @property
    def done(self) -> bool:
        if self._running:
            return False
        return self.stopped or (not self._queue and not self._sorter.is_active())

    # --- transitions ------------------------------------------------------------------------
    def start(self) -> list[str]:
        """The members to start now, in stack order; they are marked running."""
        if self.stopped:
            return []
        busy = {self._groups[n] for n in self._running if n in self._groups}
        started: list[str] = []
        for name in list(self._queue):
            if len(self._running) >= self._parallelism:
                break
            group = self._groups.get(name)
            if group is not None and group in busy:
                continue
            self._queue.remove(name)
            self._running.add(name)
            started.append(name)
            if group is not None:
                busy.add(group)
        return started

    def finish(self, name: str, status: MemberStatus) -> None:
        """Record how a running member ended; its dependants become ready or pending."""
        if name not in self._running:
            raise ValueError(f"{name} is not running")
        self._running.remove(name)
        self._results[name] = Resolution(status)
        if status is MemberStatus.ERROR and self._first_failure is None and not self._interrupted:
            self._first_failure = name  # after an interrupt, failures are its consequence
        self._sorter.done(name)
        self._pull()

    def interrupt(self) -> None:
        """SIGINT/SIGTERM: start nothing more; running members finish (their engines stop)."""
        self._interrupted = True

    def resolved(self) -> dict[str, Resolution]:
        """The members that have an end so far: those finished, and those already known
        pending because an upstream did not succeed (a run in progress shows them)."""
        return dict(self._results)

    def resolutions(self) -> dict[str, Resolution]:
        """Every member's end, in stack order; members that never started are pending."""
        if self._running:
            raise RuntimeError("members are still running")
        out: dict[str, Resolution] = {}
        for name in sorted(self._deps, key=self._rank.__getitem__):
            out[name] = self._results.get(name) or Resolution(MemberStatus.PENDING, self._never_started(name))
        return out

    # --- internals --------------------------------------------------------------------------
    def _pull(self) -> None:
        """Move newly ready members to the queue; one whose upstream failed becomes pending
        at once, and so, through graphlib, do all its descendants."""
        while self._sorter.is_active():
            ready = self._sorter.get_ready()
            if not ready:
                break
            for name in sorted(ready, key=self._rank.__getitem__):
                blocker = self._unsuccessful_upstream(name)
                if blocker is None:
                    self._queue.append(name)
                else:
                    self._results[name] = Resolution(MemberStatus.PENDING, blocker)
                    self._sorter.done(name)
        self._queue.sort(key=self._rank.__getitem__)

    def _unsuccessful_upstream(self, name: str) -> str | None:
        """The upstream to blame: one that failed, else one left pending (stack order)."""
        bad = [u for u in self._deps[name] if (r := self._results.get(u)) and r.status not in self._success]
        failed = [u for u in bad if self._results[u].status is not MemberStatus.PENDING]
        return min(failed or bad, key=self._rank.__getitem__) if bad else None

    def _never_started(self, name: str) -> str | None:
        """blocked_by for a member the run stopped before: a failed upstream, else the
        failure that stopped the run, else (interrupt) a pending upstream or nobody."""
        ups = [u for u in self._deps[name] if u in self._results]
        failed = [u for u in ups if self._results[u].status is MemberStatus.ERROR]
        if failed:
            return min(failed, key=self._rank.__getitem__)
        if self._first_failure is not None and not self._continue:
            return self._first_failure
        pending = [u for u in ups if self._results[u].status is MemberStatus.PENDING]
        return min(pending, key=self._rank.__getitem__) if pending else None


@dataclass(frozen=True)
class RunGraph:
    """What a Scheduler of one stack command is built from: who waits for whom, the order
    among peers, what counts as success, and the members that share a module directory."""

    dependencies: Mapping[str, tuple[str, ...]]
    order: Sequence[str]
    success: frozenset[MemberStatus]
    groups: Mapping[str, str]

    def scheduler(self, parallelism: int, continue_on_error: bool) -> Scheduler:
        return Scheduler(self.dependencies, parallelism=parallelism, continue_on_error=continue_on_error,
                         success=self.success, order=self.order, groups=self.groups)


def run_graph(stack: Stack, command: str) -> RunGraph:
    """The graph of `stack apply` (upstreams first) or `stack destroy` (dependants first)."""
    if command == "apply":
        deps, order, success = stack.dependencies(), topological_order(stack), APPLY_SUCCESS
    else:
        deps, order, success = destroy_dependencies(stack), destroy_order(stack), DESTROY_SUCCESS
    dirs = [str(m.directory) for m in stack.members]
    groups = {m.name: str(m.directory) for m in stack.members if dirs.count(str(m.directory)) > 1}
    return RunGraph(deps, order, success, groups)


def topological_order(stack: Stack) -> list[str]:
    """Apply order: every member after its upstreams, file order among peers."""
    return _stable_order(stack.dependencies(), stack.names)


def destroy_dependencies(stack: Stack) -> dict[str, tuple[str, ...]]:
    """name -> the members that must be resolved before this one's destroy step.

    Reverse of apply: a member goes after everything that depends on it. An owned member is
    not destroyed on its own: its step (a refresh that confirms it vanished) comes after its
    owner's destroy, and whatever depends on it must be gone before the owner goes, since
    the owner's destroy takes it along.
    """
    deps: dict[str, set[str]] = {m.name: set() for m in stack.members}
    owner = {m.name: m.owned_by for m in stack.members}
    for m in stack.members:
        for up in m.depends_on:
            if owner[m.name] == up:
                deps[m.name].add(up)  # the owned member's step follows its owner's destroy
            else:
                deps[up].add(m.name)
    for m in stack.members:
        if m.owned_by is None:
            continue
        for dependant in stack.members:
            if m.name in dependant.depends_on and dependant.name != m.owned_by:
                deps[m.owned_by].add(dependant.name)
    return {name: tuple(sorted(ups)) for name, ups in deps.items()}


def destroy_order(stack: Stack) -> list[str]:
    return _stable_order(destroy_dependencies(stack), list(reversed(stack.names)))


def _stable_order(deps: Mapping[str, Iterable[str]], names: Sequence[str]) -> list[str]:
    sched = Scheduler(deps, parallelism=1, order=names)
    order: list[str] = []
    while not sched.done:
        for name in sched.start():
            order.append(name)
            sched.finish(name, MemberStatus.OK)
    return order


def member_facts(m: Member) -> list[str]:
    """One member's place in the graph, as `stack graph` words it: ref, edges, workspace."""
    facts = [f"ref {m.module_ref}"]
    if m.depends_on:
        facts.append(f"after {', '.join(m.depends_on)}")
    if m.owned_by:
        facts.append(f"owned by {m.owned_by}")
    if m.workspace:
        facts.append(f"workspace {m.workspace}")
    if m.retain_on_destroy:
        facts.append("retained on destroy")
    return facts


def wiring_lines(m: Member) -> list[str]:
    return [f"    {key} <- {wire}{' (sensitive)' if wire.sensitive else ''}" for key, wire in m.inputs_from.items()]


def to_text(stack: Stack) -> str:
    """`hyops stack graph`: members in apply order with their edges and wiring."""
    lines = [f"stack {stack.name} ({stack.file})"]
    for name in topological_order(stack):
        m = stack.member(name)
        lines.append(f"  {name}: {'; '.join(member_facts(m))}")
        lines += wiring_lines(m)
    lines.append(f"destroy order: {' -> '.join(destroy_order(stack))}")
    return "\n".join(lines)


def to_dot(stack: Stack) -> str:
    """`hyops stack graph --dot`: Graphviz, edges from upstream to dependant."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace('"', '\\"')

    def q(text: str) -> str:
        return f'"{esc(text)}"'

    lines = [f"digraph {q(stack.name)} {{", "  rankdir=LR;"]
    for m in stack.members:
        shape = ", style=dashed" if m.owned_by else ""
        label = f'"{esc(m.name)}\\n{esc(m.module_ref)}"'  # dot's own line break
        lines.append(f"  {q(m.name)} [label={label}{shape}];")
    for m in stack.members:
        for up in m.depends_on:
            wired = sorted(k for k, w in m.inputs_from.items() if w.upstream == up)
            attrs = [f"label={q(', '.join(wired))}"] if wired else []
            if m.owned_by == up:
                attrs.append("style=bold")
            lines.append(f"  {q(up)} -> {q(m.name)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines)
