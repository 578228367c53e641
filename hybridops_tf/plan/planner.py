"""`hyops plan`: a run folder with the plan's events and a redacted plan.json.

Plan never changes a record's status. The binary plan file holds input values in the clear
(sensitive ones too), so it is written to a private temporary directory (memory-backed
/dev/shm when there is one), read back with `show -json`, redacted, and deleted; unless
`--out FILE` asks to keep it: then it is copied to FILE (mode 0600) with a sidecar
FILE.hyops.json beside it (saved.py: what it was made for, no secrets), and
`hyops apply FILE` applies exactly that plan (saved_plan_request).

The redacted document is also what `hyops plan` prints (cli/plan_render renders it).
With `detailed_exitcode` (`--detailed-exitcode`, or `-detailed-exitcode` after `--`) the exit
code is the engine's: 0 no change, 2 changes pending (the only place hyops' 2 is not a usage
error); a failure stays 1, and so does an error that would otherwise exit 2 (reported_error).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import EngineError, ExitCode, HyopsError, Interrupted, OperationFailed, UsageError
from hybridops_tf.base.interrupts import name as signal_name
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.base.redact import redact_event_line
from hybridops_tf.engine import commands
from hybridops_tf.operation import places, run_inputs
from hybridops_tf.operation.request import Outcome
from hybridops_tf.plan.request import PlanRequest
from hybridops_tf.record.address import record_key
from hybridops_tf.record.lifecycle import Command
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import EventLog, RunFolder, RunLife, RunMeta, RunNotOpened, new_run_id

if TYPE_CHECKING:  # the event parser is loaded at the engine's first line, after the spawn
    from hybridops_tf.engine.census import StreamCensus
    from hybridops_tf.engine.events import ChangeSummary, Diagnostic, PlannedChange
    from hybridops_tf.engine.process import ProcessResult
    from hybridops_tf.inputs.values import ResolvedInputs
    from hybridops_tf.stack.model import Member, Stack
    from hybridops_tf.stack.wiring import Wiring


CHANGES_PENDING = 2  # the engine's -detailed-exitcode for "succeeded, there are changes"
DETAILED_FLAGS = frozenset({"-detailed-exitcode", "--detailed-exitcode"})


@dataclass
class PlanOutcome(Outcome):
    """An Outcome plus the redacted plan document (plan.json's content) to render."""

    plan_doc: dict = field(default_factory=dict)
    has_changes: bool = False
    summary: str = ""  # "1 to add, 0 to change, 0 to destroy"


def split_detailed_exitcode(passthrough: Sequence[str]) -> tuple[bool, list[str]]:
    """Whether the passthrough asks for `-detailed-exitcode`, and the passthrough without it
    (hyops always passes the flag itself, once)."""
    rest = [arg for arg in passthrough if arg not in DETAILED_FLAGS]
    return len(rest) != len(passthrough), rest


def private_tmp() -> str:
    shm = Path("/dev/shm")
    return tempfile.mkdtemp(prefix="hyops-plan-", dir=str(shm) if shm.is_dir() else None)


def wants_detailed(flag: bool, passthrough: Sequence[str]) -> bool:
    """`--detailed-exitcode`, or the engine's `-detailed-exitcode` after `--`."""
    return flag or split_detailed_exitcode(passthrough)[0]


def reported_error(err: HyopsError, detailed: bool) -> HyopsError:
    """A plan's error as `hyops plan` exits with it: under detailed exit codes 2 means only
    "changes pending", so an error that would exit 2 (a usage error) is reported as 1."""
    if detailed and err.exit_code == CHANGES_PENDING:
        return OperationFailed(err.message)
    return err


def run_plan(req: PlanRequest) -> PlanOutcome:
    """Only what the spawn needs is loaded before it: the event parser comes with the engine's
    first line (its import then overlaps the engine's start-up), the plan document's redactor
    with a plan that has something to show, the saved-plan code with `--out`. The run folder
    keeps the one lifecycle (runtime/run_folder.RunLife), unjournaled: a plan holds no lock."""
    rt = req.runtime
    key = record_key(req.target.ref, req.workspace)
    places.refuse_other_root(req.command, req.target, req.workspace, rt.root, rt.store)
    places.refuse_shared_state(req.command, req.target, req.workspace, lambda: rt.store.read(key), rt.store,
                               rt.root)  # its plan would be of another ref's state
    resolved = run_inputs.resolve(rt, req.target, req.inputs_file, req.var_options, req.stack_inputs,
                                  req.sensitive_inputs, key=key)  # as the apply of this plan resolves them
    mode = "apply"
    if req.out is not None:
        from hybridops_tf.plan import saved

        mode = saved.plan_mode(req.destroy, req.passthrough)
    rt.ensure_root()
    run_id = new_run_id("plan")
    meta = RunMeta.start(req.command, req.argv, req.target, req.workspace, run_id, resolved.sensitive_names,
                         resolved.ephemeral_names)
    try:
        life = RunLife.open(req.runtime.root, key, run_id, meta, None)
    except RunNotOpened as err:
        raise err.error from None  # as any write under the runtime root that fails (cli/main.py)
    with life.closing(_plan_stopped):
        planned = _plan(req, life.folder, meta, resolved, mode)
    from hybridops_tf.runtime.run_result import PlannedResult

    life.close(planned.code, PlannedResult(planned.text, planned.pending).to_json())
    kept = life.folder.path / "plan.json" if planned.doc else life.folder.path
    return PlanOutcome(None, planned.code, run_id, life.folder.path,
                       f"plan {req.target.ref}: {planned.text} (run {run_id}, {kept})",
                       plan_doc=planned.doc, has_changes=planned.pending, summary=planned.text)


def _plan_stopped(err: BaseException) -> tuple[int, dict[str, Any]] | None:
    """result.json of a plan that did not finish: interrupted, or failed; a bug leaves none."""
    from hybridops_tf.runtime.run_result import ResultOutcome, StoppedResult

    if not isinstance(err, HyopsError):
        return None
    stopped = ResultOutcome.INTERRUPTED if isinstance(err, Interrupted) else ResultOutcome.FAILED
    return err.exit_code, StoppedResult(stopped, err.message).to_json()


@dataclass(frozen=True)
class _Planned:
    """What a finished plan found: its document (empty when there was nothing to show), whether
    changes are pending, the engine's counts in words, and the exit code it gives."""

    doc: dict[str, Any]
    pending: bool
    text: str
    code: int


class _PlanStream:
    """The engine's stdout lines of a plan: each logged (redacted) before it is parsed, and the
    counts, changes and errors it names kept."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.summary: list[ChangeSummary] = []
        self.changes: list[PlannedChange] = []  # every change, move, import and forget the plan shows
        self.errors: list[Diagnostic] = []
        self.census: StreamCensus | None = None  # made at the first line, as the parser is loaded

    def __call__(self, line: str) -> None:
        from hybridops_tf.engine.census import StreamCensus
        from hybridops_tf.engine.events import ChangeSummary, Diagnostic, PlannedChange, parse_event
        from hybridops_tf.runtime import run_result  # noqa: F401  # for the end: loaded while the engine runs

        self.log.append(redact_event_line(line))
        if self.census is None:
            self.census = StreamCensus()
        event = parse_event(line, self.census)
        if isinstance(event, ChangeSummary):
            self.summary.append(event)
        elif isinstance(event, PlannedChange):
            self.changes.append(event)
        elif isinstance(event, Diagnostic) and event.is_error:
            self.errors.append(event)


def _plan(req: PlanRequest, folder: RunFolder, meta: RunMeta, resolved: ResolvedInputs, mode: str) -> _Planned:
    """The engine's plan into a private temporary file, its events into the run folder; the
    redacted plan.json when there is something to show; the plan kept where `--out` asks."""
    rt = req.runtime
    asked, passthrough = split_detailed_exitcode(req.passthrough)
    detailed = req.detailed_exitcode or asked
    engine = rt.engine_for(req.target, resolved, req.workspace, folder)
    meta.engine = engine.info
    run_inputs.write_resolved(folder, resolved)  # a plan changes nothing: rerun.inputs.yml stays
    tmp = private_tmp()
    try:
        plan_file = Path(tmp) / "plan.tfplan"
        stream = _PlanStream(EventLog(folder))
        try:
            result = engine.stream(engine.argv(
                commands.plan, plan_file, destroy=req.destroy,
                extra=["-detailed-exitcode", *_lock_flag(req.lock_timeout), *passthrough]),
                stream, folder.stderr_path)
        finally:
            stream.log.close()
            folder.write_census(stream.census)
        _refuse_unfinished(req, folder, result, stream.errors, resolved, plan_file)
        pending = result.returncode == CHANGES_PENDING
        doc: dict[str, Any] = {}
        if pending or stream.changes or req.out is not None:
            from hybridops_tf.engine.sensitive import redact_sensitive

            doc = redact_sensitive(engine.show_plan_doc(plan_file))
            folder.write_text("plan.json", numbers.dumps(doc, indent=2) + "\n")
        # else the engine said "no changes" and streamed no planned change (a move, import
        # or forget is one): there is nothing for `show -json` to add, so no second engine run
        if req.out is not None:
            from hybridops_tf.plan import saved

            saved.keep(plan_file, req.out, saved.Sidecar.of_run(
                req, mode, folder.run_id, engine.info.to_json(), run_inputs.inputs_digest(rt, resolved), resolved))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = summary_text(stream.summary[-1]) if stream.summary else "plan complete"
    return _Planned(doc, pending, text, CHANGES_PENDING if detailed and pending else ExitCode.OK)


def _refuse_unfinished(req: PlanRequest, folder: RunFolder, result: ProcessResult, errors: Sequence[Diagnostic],
                       resolved: ResolvedInputs, plan_file: Path) -> None:
    """Interrupted when a signal cut the plan short (or it never started: not a failed plan);
    the plan's failure (a usage error when the engine refused only its inputs) when it wrote
    no plan."""
    if result.interrupted is not None:
        raise Interrupted(f"interrupted by {signal_name(result.interrupted)} while planning "
                          f"{req.target.ref}; nothing was changed")
    if result.returncode not in (0, CHANGES_PENDING) or not plan_file.exists():
        from hybridops_tf.engine.events import summarize_diagnostics

        said = summarize_diagnostics(run_inputs.cite_sources(errors, resolved))
        failed = UsageError if run_inputs.input_error(errors, req.target.directory) else EngineError
        raise failed(f"plan of {req.target.ref} failed (exit {result.returncode})"
                     + (f": {said}" if said else "")
                     + f"; the engine's output: {folder.events_path} and {folder.stderr_path}")


def summary_text(counts: ChangeSummary) -> str:
    """The engine's counts, in its words and order: imports and forgets only when it counts
    them (Terraform >= 1.5, OpenTofu), so a plan that only imports or forgets is not "0"."""
    parts = [f"{counts.import_count} to import"] if counts.import_count else []
    parts += [f"{counts.add} to add", f"{counts.change} to change", f"{counts.remove} to destroy"]
    if counts.forget:
        parts.append(f"{counts.forget} to forget")
    return ", ".join(parts)


def _lock_flag(seconds: float) -> list[str]:
    """The engine's -lock-timeout for `--lock-timeout S` (none at 0: the engine's default)."""
    return [f"-lock-timeout={seconds:g}s"] if seconds else []


@dataclass(frozen=True)
class MemberPlan:
    """One stack member in the stack's plan summary: its counts, or why there are none."""

    name: str
    module_ref: str
    summary: str
    has_changes: bool


def plan_stack(stack: Stack, runtime: Runtime, command: str,
               on_member: Callable[[str], None] | None = None) -> list[MemberPlan]:
    """Plan every member as `stack apply|destroy` would run it, in its order, from what the
    records hold now. A member wired to an upstream that has changes pending (or no recorded
    output yet) is not planned: its inputs are known only once that upstream has run."""
    from hybridops_tf.stack import graph
    from hybridops_tf.stack.wiring import Wiring

    wiring = Wiring(stack, runtime)
    order = graph.topological_order(stack) if command == "apply" else graph.destroy_order(stack)
    changing: set[str] = set()
    plans: list[MemberPlan] = []
    for name in order:
        member = stack.member(name)
        try:
            plan = _plan_member(member, command, wiring, changing, on_member)
        except HyopsError as err:
            plan = MemberPlan(name, member.module_ref, f"cannot be planned: {err.message}", True)
        plans.append(plan)
        if plan.has_changes:
            changing.add(name)
    return plans


def _plan_member(member: Member, command: str, wiring: Wiring, changing: set[str],
                 on_member: Callable[[str], None] | None) -> MemberPlan:
    from hybridops_tf.inputs.values import StackInputs
    from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, Status

    def planned(values: Any, sensitive: frozenset[str], destroy: bool) -> MemberPlan:
        if on_member is not None:
            on_member(member.name)
        out = run_plan(PlanRequest(target=member.target, runtime=wiring.runtime,
                                   stack_inputs=values, sensitive_inputs=sensitive, workspace=member.workspace,
                                   command=Command.PLAN, destroy=destroy))
        return MemberPlan(member.name, member.module_ref, out.summary, out.has_changes)

    if command == "apply":
        waits = sorted({w.upstream for w in member.inputs_from.values()
                        if w.upstream in changing or not _has_output(wiring, w.upstream, w.output)})
        if waits:
            return MemberPlan(member.name, member.module_ref,
                              f"not planned yet: needs the outputs of {', '.join(waits)} (known once applied)", True)
        upstream = {u: _record_outputs(wiring, u) for u in member.depends_on}
        wired = wiring.for_apply(member, upstream)
        values = StackInputs(wired.values, {k: f"inputs_from {w}" for k, w in member.inputs_from.items()})
        return planned(values, wired.sensitive, destroy=False)
    rec = wiring.store.read(member.key)
    if rec is not None and rec.status in CLAIMS_EMPTY:
        return MemberPlan(member.name, member.module_ref, f"nothing to destroy (already {rec.status.value})", False)
    if member.retain_on_destroy or (rec is not None and rec.status is Status.RETAINED):
        return MemberPlan(member.name, member.module_ref, "kept (retained; --include-retained destroys it)", False)
    if member.owned_by:
        return MemberPlan(member.name, member.module_ref, f"goes with its owner {member.owned_by}", False)
    wired = wiring.for_destroy(member)
    return planned(wired.values, wired.sensitive, destroy=True)


def _record_outputs(wiring: Wiring, upstream: str) -> dict[str, Any] | None:
    rec = wiring.store.read(wiring.stack.member(upstream).key)
    return rec.outputs if rec is not None else None


def _has_output(wiring: Wiring, upstream: str, output: str) -> bool:
    outputs = _record_outputs(wiring, upstream)
    return outputs is not None and output in outputs
