"""Saved plans: `hyops plan --out FILE` keeps one, `hyops apply FILE` applies exactly it.

Why this exists: a reviewed plan must be the one applied. The engine's plan file holds every
input in the clear, so hyops writes it only where the user asked (mode 0600) and never copies
it elsewhere. Beside it, FILE.hyops.json (no secrets) says what the plan was made for: the
module ref and directory, the workspace, the engine version, the digest and the sources of
the explicit inputs (names only), the partial-run flags, and the plan file's sha256. Applying
checks all of that before the record goes `running`, and refuses (exit 4) a plan made for
another module, workspace or engine, or whose state moved on since it was made (the engine's
own "Saved plan is stale" check, done here first so the refusal leaves the record alone).

The inputs of the apply are the plan's own (its `variables` in `show -json`): the engine
takes no other value with a saved plan, and the record then describes what was applied. The
one exception is an ephemeral variable (`ephemeral = true`, Terraform >= 1.10): no plan file
keeps its value, so the engine wants it again at apply, and only it. The sidecar names the
ephemeral variables the plan was made with; `hyops apply FILE` takes exactly those again
(--var, --var-file or TF_VAR_, as for any run), refuses any other input, and refuses to start
(exit 2) without them.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base.errors import EngineError, RefusedError, UsageError
from hybridops_tf.engine import commands
from hybridops_tf.inputs.values import CliInput
from hybridops_tf.operation import run_inputs
from hybridops_tf.operation.request import ModuleRequest
from hybridops_tf.record.address import ModuleTarget, resolve_module
from hybridops_tf.record.advice import ADVISE, where_of
from hybridops_tf.record.lifecycle import Command
from hybridops_tf.record.model import utc_now

if TYPE_CHECKING:
    from hybridops_tf.engine.runner import Engine
    from hybridops_tf.inputs.values import ResolvedInputs
    from hybridops_tf.plan.request import PlanRequest
    from hybridops_tf.runtime.root import Runtime

SIDECAR_SUFFIX = ".hyops.json"
SCHEMA_VERSION = 1
KIND = "hyops-saved-plan"
STALE = "Saved plan is stale"  # the engine's words for the same refusal


def sidecar_path(plan_file: Path) -> Path:
    return plan_file.with_name(plan_file.name + SIDECAR_SUFFIX)


def plan_mode(destroy: bool, passthrough: Sequence[str]) -> str:
    """"destroy" or "apply": what applying the kept plan will do. A refresh-only plan is not
    kept (UsageError): its apply is `hyops reconcile --write`'s job."""
    flags = {commands.flag_name(arg) for arg in passthrough}
    if "-refresh-only" in flags:
        raise UsageError("--out keeps plans that apply or destroy; a -refresh-only plan is applied by "
                         f"`{ADVISE.named('reconcile', 'MODULE_DIR', '--write')}`")
    return "destroy" if destroy or "-destroy" in flags else "apply"


@dataclass(frozen=True)
class Sidecar:
    """FILE.hyops.json: what a saved plan was made for. Never holds a value."""

    module_ref: str
    module_dir: str
    workspace: str | None
    mode: str  # "apply" | "destroy"
    engine: Mapping[str, str]  # EngineInfo.to_json(): binary, version
    inputs_digest: str
    inputs: Mapping[str, str]  # explicit input name -> its source ("--var", "--inputs FILE", ...)
    sensitive_inputs: tuple[str, ...] = ()  # secret although their variable is not (wired ones)
    ephemeral_inputs: tuple[str, ...] = ()  # ephemeral variables set for the plan: wanted again at apply
    partial_flags: tuple[str, ...] = ()  # -target/-replace given to the plan
    run_id: str = ""
    created_at: str = ""
    plan_sha256: str = ""
    schema_version: int = SCHEMA_VERSION
    kind: str = KIND
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of_run(cls, req: PlanRequest, mode: str, run_id: str, engine: Mapping[str, str], digest: str,
               resolved: ResolvedInputs) -> Sidecar:
        from hybridops_tf.operation.reads import partial_run_flags

        return cls(
            module_ref=req.target.ref, module_dir=str(req.target.directory), workspace=req.workspace,
            mode=mode, engine=dict(engine), inputs_digest=digest,
            inputs={name: resolved.source_of(name) for name in sorted(resolved.explicit)},
            sensitive_inputs=tuple(sorted(req.sensitive_inputs)), ephemeral_inputs=resolved.set_ephemeral(),
            partial_flags=tuple(partial_run_flags(req.passthrough)), run_id=run_id, created_at=utc_now(),
        )

    def to_json(self) -> str:
        doc = asdict(self)
        doc.pop("extra")
        return json.dumps(doc, indent=2) + "\n"

    @classmethod
    def parse(cls, text: str, where: Path) -> Sidecar:
        try:
            doc = json.loads(text)
            if doc.get("kind") != KIND or doc.get("schema_version") != SCHEMA_VERSION:
                raise ValueError(f"not a schema_version {SCHEMA_VERSION} {KIND} file")
            return cls(
                module_ref=str(doc["module_ref"]), module_dir=str(doc["module_dir"]),
                workspace=doc.get("workspace"), mode=str(doc["mode"]), engine=dict(doc["engine"]),
                inputs_digest=str(doc["inputs_digest"]), inputs=dict(doc["inputs"]),
                sensitive_inputs=tuple(doc.get("sensitive_inputs") or ()),
                ephemeral_inputs=tuple(doc.get("ephemeral_inputs") or ()),
                partial_flags=tuple(doc.get("partial_flags") or ()), run_id=str(doc.get("run_id", "")),
                created_at=str(doc.get("created_at", "")), plan_sha256=str(doc["plan_sha256"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise UsageError(f"{where} cannot be read ({err}): make the plan again with "
                             f"`{ADVISE.plan_out(None)}`") from None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def keep(engine_plan: Path, out: Path, sidecar: Sidecar) -> None:
    """Copy the engine's plan file to `out` (0600, atomically) and write its sidecar."""
    from dataclasses import replace

    from hybridops_tf.base.files import atomic_write_bytes, atomic_write_text

    data = engine_plan.read_bytes()
    out = out.absolute()
    try:
        atomic_write_bytes(out, data)
        atomic_write_text(sidecar_path(out), replace(sidecar, plan_sha256=_sha256(data)).to_json())
    except OSError as err:
        raise UsageError(f"cannot write the plan file {out}: {err.strerror or err}") from None


def read(plan_file: Path) -> Sidecar:
    """The sidecar of `plan_file`, checked against the file's bytes."""
    where = sidecar_path(plan_file)
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{plan_file} has no {where.name} beside it: hyops applies the plans "
                         f"`{ADVISE.plan_out(None)}` makes (the sidecar says what each was made for)"
                         ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read {where}: {getattr(err, 'strerror', None) or err}") from None
    sidecar = Sidecar.parse(text, where)
    try:
        data = plan_file.read_bytes()
    except OSError as err:
        raise UsageError(f"cannot read the plan file {plan_file}: {err.strerror or err}") from None
    if _sha256(data) != sidecar.plan_sha256:
        raise RefusedError(f"{plan_file} is not the plan hyops saved with {where.name} (its content "
                           "changed): make the plan again; nothing was run")
    return sidecar


def _refuse_other_target(sidecar: Sidecar, plan_file: Path, ref: str | None, workspace: str | None) -> None:
    if ref is not None and ref != sidecar.module_ref:
        raise RefusedError(f"{plan_file} was made for module {sidecar.module_ref} ({sidecar.module_dir}), "
                           f"not {ref}: plan {ref} itself; nothing was run")
    if workspace != sidecar.workspace:
        made, now = sidecar.workspace or "default", workspace or "default"
        raise RefusedError(f"{plan_file} was made for workspace {made}, not {now}: pass --workspace {made} "
                           f"or plan workspace {now} itself; nothing was run")


def _state_serial(doc: Mapping[str, Any]) -> tuple[str, int]:
    serial = doc.get("serial")
    return str(doc.get("lineage") or ""), serial if isinstance(serial, int) else 0


def prior_state(plan_file: Path) -> tuple[str, int] | None:
    """(lineage, serial) of the state the plan was made from (the plan file's `tfstate`
    entry); None when the file is not laid out that way (then only the engine checks)."""
    try:
        with zipfile.ZipFile(plan_file) as archive:
            return _state_serial(json.loads(archive.read("tfstate")))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None


def refuse_stale(engine: Engine, plan_file: Path, sidecar: Sidecar) -> None:
    """RefusedError when the state is not the one the plan was made from. Stricter than the
    engine, which skips the check when the plan was made from no state at all: a second plan
    of an empty module would otherwise create everything twice."""
    prior = prior_state(plan_file)
    if prior is None:
        return
    current = _state_serial(engine.capture_json(engine.argv(commands.state_pull)))
    if current != prior:
        raise RefusedError(
            f"{STALE}: the state of {sidecar.module_ref} changed after {plan_file} was made "
            f"(serial {prior[1]} -> {current[1]}); plan again with "
            f"`{ADVISE.plan_out(where_of(sidecar.module_ref, sidecar.module_dir, sidecar.workspace), plan_file)}`; "
            "nothing was run")


def planned_inputs(plan_doc: Mapping[str, Any], plan_file: Path, sidecar: Sidecar) -> dict[str, Any]:
    """The explicit inputs the plan was made with, as the plan (its `show -json`) holds them (in
    memory only): all but the ephemeral ones, which no plan holds."""
    variables = plan_doc.get("variables")
    if not isinstance(variables, Mapping):
        variables = {}
    values: dict[str, Any] = {}
    for name in (n for n in sidecar.inputs if n not in sidecar.ephemeral_inputs):
        entry = variables.get(name)
        if not isinstance(entry, Mapping) or "value" not in entry:
            raise EngineError(f"`show -json {plan_file}` holds no value for input {name!r}; nothing was run")
        values[name] = entry["value"]
    return values


@dataclass(frozen=True)
class SavedPlanApply:
    """What the CLI knows when it applies a saved plan."""

    plan_file: Path
    runtime: Runtime
    modules_root: Path | None
    ref: str | None  # --ref given: must be the plan's
    workspace_of: Callable[[Path], str | None]  # the workspace the caller asks for, per module dir
    passthrough: Sequence[str] = ()
    lock_timeout: float = 0
    allow_uncertain: bool = False
    argv: Sequence[str] = ()
    on_event: Any = None
    var_options: Sequence[CliInput] = ()  # the ephemeral inputs, given again (no plan keeps them)
    reviewed: bool = False  # the plan was made just now from these very inputs (plan/reviewed.py)


def _refuse_inputs(req: SavedPlanApply, sidecar: Sidecar, target: ModuleTarget) -> None:
    """UsageError (nothing run) when the inputs given name a variable the plan fixed (unless the
    plan was made from them just now), or leave out an ephemeral one the plan was made with."""
    from hybridops_tf.inputs.values import module_layers, read_variables

    specs = read_variables(target.directory, req.runtime.hcl_cache(), tofu=req.runtime.reads_tofu())
    given = run_inputs.given_names(req.runtime, target, req.var_options, specs)
    fixed = sorted(n for n in given if not (n in specs and specs[n].ephemeral))
    if fixed and not req.reviewed:
        raise UsageError(f"{req.plan_file} is a saved plan and carries its inputs: drop {', '.join(map(repr, fixed))} "
                         "(the engine takes only ephemeral variables again with a saved plan)")
    own = {n for layer in module_layers(target.directory, specs) for n in layer.values}
    missing = [n for n in sidecar.ephemeral_inputs if n not in given and n not in own]
    if missing:
        again = " ".join(f"--var {n}=..." for n in missing)
        raise UsageError(f"{req.plan_file} was made with the ephemeral input(s) {', '.join(missing)}, which no "
                         f"plan file keeps: give them again ({again}, a --var-file, or TF_VAR_{missing[0]}); "
                         "nothing was run")


def saved_plan_request(req: SavedPlanApply) -> ModuleRequest:
    """Every check a saved plan must pass, then the ModuleRequest that applies exactly it."""
    from hybridops_tf.inputs.values import StackInputs
    from hybridops_tf.record.action_fold import planned_in

    plan_file = Path(req.plan_file).absolute()
    sidecar = read(plan_file)
    target = resolve_module(sidecar.module_dir, sidecar.module_ref, req.modules_root)
    workspace = req.workspace_of(target.directory)
    _refuse_other_target(sidecar, plan_file, req.ref, workspace)
    engine = req.runtime.engine_for(target, None, sidecar.workspace, None)
    made_with = sidecar.engine.get("version")
    if made_with != engine.info.version:
        raise RefusedError(f"{plan_file} was made by engine version {made_with} "
                           f"({sidecar.engine.get('binary')}), not {engine.info.version} ({engine.info.binary}): "
                           "apply it with that engine (--engine PATH) or plan again; nothing was run")
    _refuse_inputs(req, sidecar, target)
    refuse_stale(engine, plan_file, sidecar)
    plan_doc = engine.show_plan_doc(plan_file)
    values = planned_inputs(plan_doc, plan_file, sidecar)
    return ModuleRequest(
        command=Command(sidecar.mode), target=target, runtime=req.runtime,
        stack_inputs=StackInputs(values, dict(sidecar.inputs)), sensitive_inputs=frozenset(sidecar.sensitive_inputs),
        var_options=req.var_options,
        passthrough=[*sidecar.partial_flags, *req.passthrough], lock_timeout=req.lock_timeout,
        allow_uncertain=req.allow_uncertain, argv=req.argv, workspace=sidecar.workspace,
        on_event=req.on_event, plan_file=plan_file, planned_actions=planned_in(plan_doc),
    )
