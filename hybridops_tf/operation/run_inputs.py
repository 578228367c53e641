"""A run's inputs: resolved from every layer (step 1), digested under the runtime root's key,
and written twice: resolved.inputs.yml in the run folder, rerun.inputs.yml beside the module.

Secrets are redacted in both files, ephemeral values too; the digest is keyed, so a short guess
list cannot find a secret from the record's `inputs_digest` either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base import notices
from hybridops_tf.base.errors import HyopsError, RefusedError, UsageError
from hybridops_tf.base.files import (
    PreparedWrite,
    atomic_write_bytes,
    atomic_write_text,
)
from hybridops_tf.base.redact import is_placeholder
from hybridops_tf.inputs.values import (
    CliInput,
    InputLayer,
    MissingInputError,
    load_inputs_file,
    module_layers,
    module_var_files,
    parse_var_options,
    read_variables,
    remember,
    resolve_inputs,
)
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.runtime.run_folder import RunFolder
from hybridops_tf.store.documents import RERUN_INPUTS

if TYPE_CHECKING:
    from hybridops_tf.engine.events import Diagnostic
    from hybridops_tf.inputs.values import ResolvedInputs, VariableSpec
    from hybridops_tf.runtime.root import Runtime
    from hybridops_tf.store import Documents


def resolve(
    rt: Runtime,
    target: ModuleTarget,
    inputs_file: Path | None,
    var_options: Sequence[str | CliInput],
    stack_inputs: Mapping[str, Any] | None,
    extra_sensitive: frozenset[str] = frozenset(),
    stack_sources: Mapping[str, str] | None = None,
    key: str | None = None,
    note: bool = True,
    read_only: bool = False,
) -> ResolvedInputs:
    """Step 1 of every command that runs the engine on a module (plan, apply, destroy, the
    refresh and import reconcile runs, reconcile's plans with the last run's inputs as the apply
    it advises passes them, init, `stack apply --resume`'s comparison): every input parses,
    names a declared variable, and covers the required ones, counting what the engine reads
    itself (the caller's TF_VAR_, the module's tfvars).

    One precedence for all of them, so that a plan shows what the apply with the same
    environment and arguments does (docs/inputs.md: One resolution for every command): what
    the caller gives now wins, ranked as the engine ranks it (TF_VAR_ < terraform.tfvars <
    *.auto.tfvars < stack inputs < --inputs/--var-file files and --var, in the order given:
    var_options is the command line's CliInput values in that order, an inputs_file before them). The record key
    `key`'s rerun.inputs.yml (the last run's inputs) only fills a variable that none of them
    gives and that has no default: what exists was built with it, and nothing else could run.
    It never outranks a source, not even the caller's TF_VAR_. `note`: say which it filled.
    `read_only` (reconcile's reads): the module's parsed variables are not cached either.

    stack_sources labels single stack inputs (e.g. "inputs_from network.id"). extra_sensitive
    marks inputs secret although their variable is not (a value wired from a sensitive
    upstream output): redacted alike. Undeclared names in a file are warned about (a notice)
    and ignored, as the engine does.
    """
    specs = read_variables(target.directory, rt.hcl_cache(), tofu=rt.reads_tofu())
    given = ([CliInput("--inputs", str(inputs_file))] if inputs_file is not None else []) + [
        item if isinstance(item, CliInput) else CliInput("--var", item) for item in var_options]
    base = module_layers(target.directory, specs)
    layers = [layer for item in given for layer in _layer(rt, target, item, specs)]
    filled = [] if key is None else _recorded_fill(rt, key, specs, [*base, *layers], stack_inputs or {})
    try:
        resolved = resolve_inputs(
            specs,
            stack_inputs=stack_inputs,
            module_dir=str(target.directory),
            stack_source="stack",
            stack_sources=stack_sources or getattr(stack_inputs, "sources", None),
            base_layers=base,
            layers=[*filled, *layers],  # a filled name is in no other layer: its rank decides nothing
        )
    except MissingInputError as err:  # the advice comes from the one builder of printed commands
        from hybridops_tf.record.advice import give_inputs

        secret = frozenset(n for n in err.names if specs[n].sensitive or specs[n].ephemeral or n in extra_sensitive)
        raise MissingInputError(
            f"missing required input{'s' if len(err.names) > 1 else ''} {', '.join(map(repr, err.names))} for "
            f"{target.directory}: {give_inputs(list(err.names), secret)}", err.names) from None
    refuse_wrong_types(rt, target, specs, resolved, key)
    if not read_only:
        remember(target.directory, rt.hcl_cache())
    for warning in resolved.warnings:
        notices.warning(warning)
    if note and (reused := sorted(name for layer in filled for name in layer.values)) and key is not None:
        notices.note(f"the last run's {', '.join(reused)} ({shown(rt.rerun_inputs_path(key, fetch=False))}): "
                     f"{'it sets' if len(reused) == 1 else 'they set'} what no input given here sets, "
                     "and the module has no default; inputs given win")
    if extra_sensitive:
        resolved = replace(resolved, sensitive_names=resolved.sensitive_names | extra_sensitive)
    return resolved


def refuse_wrong_types(rt: Runtime, target: ModuleTarget, specs: Mapping[str, VariableSpec],
                       resolved: ResolvedInputs, key: str | None) -> None:
    """A value that cannot convert to its variable's type is refused here, before any engine
    runs, in the words the engine uses and at the place the user gave it (UsageError, exit 2):
    one error, one exit code in every command on every engine. The engine alone is not enough: a
    `destroy` of a module whose state is empty does not evaluate the variables on Terraform
    >= 1.12. What hyops cannot judge for certain (inputs/type_check.py) the engine still does."""
    from hybridops_tf.inputs import type_check

    refused = type_check.refused_inputs(specs, resolved)
    if not refused:
        return
    name, verdict = refused[0]
    more = f" (and {len(refused) - 1} more: {', '.join(n for n, _ in refused[1:])})" if len(refused) > 1 else ""
    raise UsageError(f"{_given_place(rt, target, name, resolved.source_of(name), key)}: Invalid value for input "
                     f'variable: The given value is not valid for variable "{name}": {verdict.why}{more}; '
                     "nothing was run")


def _given_place(rt: Runtime, target: ModuleTarget, name: str, source: str, key: str | None) -> str:
    """Where the user gave input `name` (its resolved `source`), as a message names it: `FILE
    line L` of their var file, of the module's own tfvars file or of the last run's
    rerun.inputs.yml, `--var NAME`, `TF_VAR_NAME`."""
    if source == "env":
        return f"TF_VAR_{name}"
    if source.startswith(RECORDED) and key is not None:
        path = rt.rerun_inputs_path(key, fetch=False)
    elif source in module_var_files(target.directory):
        path = target.directory / source
    else:
        path = None
    where, line = given_at(name, source if path is None else f"--inputs {shown(path)}")
    return f"{where} line {line}" if line is not None else where


def shown(path: Path) -> str:
    """A path as a person types it here: relative to the current directory when below it."""
    try:
        return str(Path(os.path.abspath(path)).relative_to(Path.cwd()))
    except (ValueError, OSError):
        return str(path)


def recorded_names(resolved: ResolvedInputs) -> list[str]:
    """The inputs whose value came from the last run's rerun.inputs.yml."""
    return sorted(n for n, source in resolved.sources.items() if source.startswith(RECORDED))


RECORDED = "recorded"  # the source label of a value from the last run's rerun.inputs.yml


def _recorded_fill(rt: Runtime, key: str, specs: Mapping[str, Any], layers: Sequence[InputLayer],
                   stack_inputs: Mapping[str, Any]) -> list[InputLayer]:
    """The last run's inputs of record `key` for the required variables (no default) that no
    layer and no stack input sets; its secret and ephemeral ones left out (they were never
    written). None where a var file hyops cannot read may set anything (the engine reads it)."""
    if any(layer.opaque for layer in layers):
        return []
    set_now = set(stack_inputs) | {name for layer in layers for name in layer.values}
    unset = {name for name, spec in specs.items() if spec.required and name not in set_now}
    if not unset:
        return []  # nothing to fill: the last run's file is not even read
    path = rt.rerun_inputs_path(key)
    if not path.is_file():
        return []
    try:
        recorded = load_inputs_file(path)
    except HyopsError as err:
        notices.warning(f"{path} is not used: {err.message}")
        return []
    usable = {k: v for k, v in recorded.items() if k in unset and not is_placeholder(v)}
    return [InputLayer(f"{RECORDED} ({path.name} of the last run)", usable, strict=False)] if usable else []


def _layer(rt: Runtime, target: ModuleTarget, item: CliInput, specs: Mapping[str, Any]) -> list[InputLayer]:
    if item.option == "--var":
        return [InputLayer(item.label, parse_var_options([item.text], specs, item.engine_syntax))]
    path = Path(item.text)
    if not path.exists() and (key := rt.rerun_inputs_key(path)) is not None:
        rt.rerun_inputs_path(key)  # a summary's `--inputs .hyops/.../rerun.inputs.yml` on another runner
    return [InputLayer(item.label, load_inputs_file(path), strict=False)]


def given_names(rt: Runtime, target: ModuleTarget, items: Sequence[CliInput], specs: Mapping[str, Any]) -> set[str]:
    """The variables the command line's inputs set (UsageError when one cannot be read)."""
    return {name for item in items for layer in _layer(rt, target, item, specs) for name in layer.values}


ENGINE_VAR_FILE = "/dev/fd/0"  # where the engine reads hyops's var file (engine/runner.py: VAR_FILE_ARG)


def cite_sources(diagnostics: Sequence[Any], resolved: ResolvedInputs | None,
                 only: frozenset[str] | None = None) -> list[Any]:
    """The engine's diagnostics, each one placed in hyops's var file (`/dev/fd/0 line N`, a
    pipe the user never wrote) placed instead where the user gave that input: `FILE line L`
    of their --var-file/--inputs file, or `--var NAME`. The var file holds one input a line,
    in the order of resolved.var_file(only), so line N is that input. Other events pass as
    they are."""
    if resolved is None:
        return list(diagnostics)
    names = [n for n in resolved.explicit if only is None or n in only]
    cited = []
    for diag in diagnostics:
        line = getattr(diag, "start_line", None)
        if getattr(diag, "filename", None) == ENGINE_VAR_FILE and line is not None and 0 < line <= len(names):
            filename, line = given_at(names[line - 1], resolved.source_of(names[line - 1]))
            diag = replace(diag, filename=filename, start_line=line)
        cited.append(diag)
    return cited


INPUT_SUMMARIES = frozenset({  # the engine's own summaries of a refused input value (Terraform, OpenTofu)
    "Invalid value for input variable", "No value for required variable", "Invalid value for variable"})


def input_error(errors: Sequence[Diagnostic], directory: Path) -> bool:
    """Whether the engine refused a run for its inputs alone: every error is placed in a var
    file (hyops's, or one the engine reads from the module's folder) or is the engine's
    refusal of an input's value (a TF_VAR_ one is placed at its `variable` block). Such a
    refusal is a usage error, exit 2, in every command, as `hyops apply` exits for it."""
    var_files = {ENGINE_VAR_FILE, *module_var_files(directory)}
    return bool(errors) and all(d.filename in var_files or d.summary.strip() in INPUT_SUMMARIES for d in errors)


def given_at(name: str, source: str) -> tuple[str, int | None]:
    """Where the user gave input `name` from `source` (a resolved source label): the file and
    line for a file (the first line that sets it; None when it cannot be found), else the
    option itself (`--var NAME`, `stack input NAME`)."""
    option, _, path = source.partition(" ")
    if option not in ("--inputs", "--var-file") or not path:
        return (f"--var {name}" if source == "--var" else f"{source} input {name}"), None
    pattern = re.compile(r'^\s*["\']?' + re.escape(name) + r'["\']?\s*[:=]')
    try:
        with open(path, encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                if pattern.match(line):
                    return path, number
    except OSError:
        pass
    return path, None


def write_resolved(folder: RunFolder, resolved: ResolvedInputs) -> Path:
    """resolved.inputs.yml of this run: each value the engine uses, with its source,
    secrets redacted."""
    atomic_write_text(folder.resolved_inputs_path, resolved.resolved_yaml(
        f"resolved.inputs.yml of run {folder.run_id}"), durable=False)  # a run folder file: runs.RunFolder
    return folder.resolved_inputs_path


def prepare_rerun(rt: Runtime, target: ModuleTarget, resolved: ResolvedInputs, key: str | None = None) -> PreparedWrite:
    """rerun.inputs.yml of the module (of its record `key`, the ref plus `@workspace`
    outside the default one), secrets redacted, ready to commit. The caller commits it only
    once `running` is persisted: a refused run leaves the module's files as they were. The
    same inputs as the last run's leave the file untouched (every write of it is durable, so
    a rerun with the same inputs needs no disk flush before its engine starts)."""
    text = resolved.rerun_yaml(f"rerun.inputs.yml of {key or target.ref} ({target.directory})")
    return PreparedWrite(rt.rerun_inputs_path(key or target.ref, fetch=False), text.encode("utf-8"), keep_same=True)


def commit_rerun(rerun: PreparedWrite, store: Documents, key: str) -> None:
    """Put rerun.inputs.yml in place, then the store's document says what it says (the local
    store's is that very file: left as it is). OSError if it cannot."""
    rerun.commit()
    store.put_document(RERUN_INPUTS, key, rerun.path.read_text(encoding="utf-8"))


def read_rerun(path: Path) -> bytes | None:
    """rerun.inputs.yml as it is before a run replaces it (None: there is none)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def restore_rerun(path: Path, before: bytes | None, store: Documents, key: str) -> None:
    """rerun.inputs.yml back to what it was before a run the engine refused (none: removed),
    so that reconcile and destroy use the inputs of the last run that did anything. The store's
    document follows (a store outside the root keeps its copy when there was none before: no
    run reads it without a record)."""
    if not path.name:
        return
    if before is None:
        path.unlink(missing_ok=True)
        return
    atomic_write_bytes(path, before)
    store.put_document(RERUN_INPUTS, key, before.decode("utf-8"))


def digest_key(rt: Runtime, create: bool = True) -> bytes | None:
    """The store's random key for `inputs_digest`: the runtime root's key file, or the shared
    store's one key for every runner (store/keyfile.py, store/postgres.py). With create=False
    (a read-only comparison, e.g. `--resume`), None when there is no key yet: no digest can
    match. RefusedError when the key cannot be read or made."""
    store = rt.store
    try:
        return store.digest_key(create)
    except OSError as err:
        raise RefusedError(f"cannot use the inputs digest key in {store.describe()}: {err.strerror or err}; "
                           "nothing was run") from None


def inputs_digest(rt: Runtime, resolved: ResolvedInputs) -> str:
    """The record's `inputs_digest` of these inputs, under the root's key (made if new)."""
    key = digest_key(rt)
    assert key is not None  # create=True either returns a key or raises
    return resolved.digest(key)
