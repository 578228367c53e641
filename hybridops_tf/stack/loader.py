"""Load and validate `stack.yml` before anything runs (docs/contract.md: Stacks).

Every problem is exit 2 (UsageError) naming the line, the member and the field, and all of
them are reported at once, so a broken stack is fixed in one edit rather than one error
per attempt. Wiring is checked against the modules' own HCL (python-hcl2, via
`declarations.read_variables`/`read_outputs`): an input no variable declares, an output no
upstream declares, or a required variable nobody sets would otherwise surface halfway
through a run, after the upstreams had already changed the cloud. A sensitive output wired
into a variable not declared `sensitive` is refused too, as the engine refuses a sensitive
value in a non-sensitive output: the downstream would show the secret in its plan and
outputs, so in its record and events.jsonl. Nothing here starts an engine or writes a file.
"""

from __future__ import annotations

import graphlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeGuard

import yaml

from hybridops_tf.base import notices, numbers
from hybridops_tf.base.config_names import holds_configuration
from hybridops_tf.base.errors import UsageError
from hybridops_tf.inputs.sources import MAX_VALUES, plain_value
from hybridops_tf.inputs.values import module_layers, read_outputs, read_variables, resolve_inputs
from hybridops_tf.record.address import validate_ref
from hybridops_tf.stack.model import DEFAULT_STACK_FILE, Member, Stack, Wire

TOP_FIELDS = ("stack", "modules")
MEMBER_FIELDS = ("name", "path", "ref", "depends_on", "inputs", "inputs_from", "owned_by",
                 "retain_on_destroy", "workspace")
_WORKSPACE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*\Z")


class StackLoader:
    """One validation pass; problems are collected with their line and raised together."""

    def __init__(self, path: Path, hcl_cache: Path | None = None, read_only: bool = False, tofu: bool = False) -> None:
        self.path = path
        self.hcl_cache = hcl_cache
        self.read_only = read_only
        self.tofu = tofu
        self.base = Path(path).absolute().parent
        self.problems: list[tuple[int, str]] = []
        self.unresolved: list[str] = []

    def problem(self, line: int, text: str) -> None:
        self.problems.append((line, text))

    def fail_if_any(self) -> None:
        if not self.problems:
            return
        lines = [f"  line {ln}: {text}" if ln else f"  {text}" for ln, text in sorted(self.problems)]
        raise UsageError(f"stack file {self.path} is invalid (nothing was run):\n" + "\n".join(lines))

    def load(self) -> Stack:
        data, root = self._compose()
        if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
            raise UsageError(f"stack file {self.path} must be a mapping with `stack:` and "
                             "`modules:` (see docs/contract.md: Stacks or modules/sim/stack.yml)")
        keys = self._keys(root, "")
        for key in data:
            if key not in TOP_FIELDS:
                self.problem(keys.get(str(key), 1), f"unknown top-level field {key!r} "
                             f"(fields: {', '.join(TOP_FIELDS)})")
        name = data.get("stack")
        if not _is_segment(name):  # '..' or '.' would put the run report outside <root>/stacks/
            self.problem(keys.get("stack", 1), "stack: a name is required, made of lowercase "
                         "letters, digits, '_', '.', '-' (it prefixes member refs: <stack>/<name>)")
            name = "stack"
        members_node = _child(root, "modules")
        raw_members = data.get("modules")
        if not isinstance(raw_members, list) or not raw_members:
            self.problem(keys.get("modules", 1), "modules: a non-empty list of members is required")
            self.fail_if_any()
        assert isinstance(members_node, yaml.SequenceNode) and isinstance(raw_members, list)
        drafts = [d for d in (self._member(name, raw, node)
                              for raw, node in zip(raw_members, members_node.value, strict=True)) if d]
        self._cross_check(drafts)
        self.fail_if_any()
        if self.unresolved:
            notices.note(f"stack file {self.path}: required input(s) set by neither inputs nor inputs_from "
                         f"here, so not resolved (what reads them is not checked): {'; '.join(self.unresolved)}; "
                         "an apply needs them (e.g. TF_VAR_NAME in its environment)")
        return Stack(name=name, file=Path(self.path).absolute(),
                     members=tuple(d.freeze() for d in drafts), unresolved=tuple(self.unresolved))

    # --- YAML with line numbers -------------------------------------------------------------
    def _compose(self) -> tuple[Any, yaml.Node | None]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            raise UsageError(f"cannot read stack file {self.path}: {why}; pass the stack file "
                             f"(default ./{DEFAULT_STACK_FILE})") from None
        loader = None
        try:
            loader = numbers.yaml_loader()(text)  # safe, numbers as their text; its reader refuses controls
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = _unquoted(getattr(err, "problem", None) or str(err).splitlines()[0])
            raise UsageError(f"stack file {self.path} is not valid YAML: {problem}{where}") from None
        except RecursionError:
            raise UsageError(f"stack file {self.path} is nested too deeply to be a stack") from None
        finally:
            if loader is not None:
                loader.dispose()
        return data, node

    def _keys(self, node: yaml.Node | None, where: str) -> dict[str, int]:
        """key -> line of a mapping node; a key written twice is a problem (YAML keeps one)."""
        lines: dict[str, int] = {}
        if not isinstance(node, yaml.MappingNode):
            return lines
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            if key.value in lines:
                self.problem(_line(key), f"{where}{key.value}: written twice in one mapping "
                             f"(first at line {lines[key.value]}); YAML would silently keep one")
            else:
                lines[key.value] = _line(key)
        return lines

    # --- one member ---------------------------------------------------------------------------
    def _member(self, stack: str, raw: Any, node: yaml.Node) -> _Draft | None:
        line = _line(node)
        if not isinstance(raw, dict):
            self.problem(line, "modules: each member must be a mapping with at least name and path")
            return None
        name = raw.get("name")
        who = f"member {name!r}" if isinstance(name, str) else f"the member at line {line}"
        keys = self._keys(node, f"{who}: ")

        def at(key: str) -> int:
            """The line of a field, else the member's own."""
            return keys.get(key, line)

        for key in raw:
            if key not in MEMBER_FIELDS:
                self.problem(at(str(key)), f"{who}: unknown field {key!r} (fields: {', '.join(MEMBER_FIELDS)})")
        if not _is_segment(name):
            self.problem(at("name"), f"{who}: name is required, made of lowercase letters, digits, "
                         "'_', '.', '-'")
            return None
        draft = _Draft(name=name, line=line, keys=keys)
        draft.ref = self._ref(raw, stack, who, at("ref"))
        draft.directory = self._directory(raw.get("path"), who, at("path"))
        draft.depends_on = self._names(raw.get("depends_on", []), f"{who}: depends_on", at("depends_on"))
        draft.inputs = self._inputs(raw.get("inputs", {}), who, at("inputs"))
        draft.inputs_from = self._wires(raw.get("inputs_from", {}), who, at("inputs_from"),
                                        _child(node, "inputs_from"))
        owned_by = raw.get("owned_by")
        if owned_by is not None and not isinstance(owned_by, str):
            self.problem(at("owned_by"), f"{who}: owned_by must name one member")
            owned_by = None
        draft.owned_by = owned_by
        retain = raw.get("retain_on_destroy", False)
        if not isinstance(retain, bool):
            self.problem(at("retain_on_destroy"), f"{who}: retain_on_destroy must be true or false")
        draft.retain = retain is True
        workspace = raw.get("workspace")
        if workspace is not None and (not isinstance(workspace, str) or not _WORKSPACE.match(workspace)):
            self.problem(at("workspace"), f"{who}: workspace must be a name of letters, digits, "
                         "'_', '-', '.'")
            workspace = None
        draft.workspace = workspace
        return draft

    def _ref(self, raw: Mapping[str, Any], stack: str, who: str, line: int) -> str:
        ref = raw.get("ref", f"{stack}/{raw['name']}")
        if not isinstance(ref, str):
            self.problem(line, f"{who}: ref must be a string such as {stack}/{raw['name']}")
            return f"{stack}/{raw['name']}"
        try:
            return validate_ref(ref, source=f"{who} ref")
        except UsageError as err:
            self.problem(line, err.message)
            return ref

    def _directory(self, raw: Any, who: str, line: int) -> Path | None:
        """The member's module directory, refused when it could leave the stack's directory."""
        if not isinstance(raw, str) or not raw.strip():
            self.problem(line, f"{who}: path is required: the module directory, relative to "
                         f"{self.base}")
            return None
        real, why = self._inside(raw)
        if why is not None:
            self.problem(line, f"{who}: path {raw!r} {why}")
        return real

    def _inside(self, raw: str) -> tuple[Path | None, str | None]:
        """(resolved directory, None), or (None, why it is refused)."""
        pure = PurePosixPath(raw)
        if pure.is_absolute() or raw.startswith("~"):
            return None, "must be relative to the stack file's directory, not absolute"
        if ".." in pure.parts:
            return None, "must not use '..': a stack reaches only modules under its own directory"
        full = self.base / pure
        try:
            real = full.resolve()
        except (OSError, RuntimeError, ValueError) as err:  # a symlink loop, a NUL character
            return None, f"cannot be resolved ({err})"
        if not real.is_relative_to(self.base.resolve()):
            return None, f"leads outside the stack file's directory through a symlink (to {real})"
        if not real.is_dir():
            return None, f"{full} does not exist or is not a directory"
        if not holds_configuration(real):
            return None, f"{full} holds no .tf files (nor .tf.json, .tofu, .tofu.json)"
        return real, None

    def _names(self, raw: Any, where: str, line: int) -> tuple[str, ...]:
        if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
            self.problem(line, f"{where} must be a list of member names")
            return ()
        if len(set(raw)) != len(raw):
            self.problem(line, f"{where} names a member twice")
        return tuple(dict.fromkeys(raw))

    def _inputs(self, raw: Any, who: str, line: int) -> dict[str, Any]:
        if not isinstance(raw, dict) or not all(isinstance(k, str) for k in raw):
            self.problem(line, f"{who}: inputs must be a mapping of variable names to values")
            return {}
        values: dict[str, Any] = {}
        budget = [MAX_VALUES]  # one bound for the whole mapping: aliases expand
        for key, value in raw.items():
            try:
                values[key] = plain_value(value, f"{who}: inputs.{key}", budget)
            except UsageError as err:
                self.problem(line, err.message)
        return values

    def _wires(self, raw: Any, who: str, line: int, node: yaml.Node | None) -> dict[str, tuple[str, str, int]]:
        if not isinstance(raw, dict) or not all(isinstance(k, str) for k in raw):
            self.problem(line, f"{who}: inputs_from must map inputs to \"upstream.output\"")
            return {}
        keys = self._keys(node, f"{who}: inputs_from.")
        wires: dict[str, tuple[str, str, int]] = {}
        for key, source in raw.items():
            upstream, dot, output = source.rpartition(".") if isinstance(source, str) else ("", "", "")
            if not dot or not upstream or not output:
                self.problem(keys.get(key, line), f"{who}: inputs_from.{key}: expected "
                             f"\"upstream.output\", got {source!r}")
                continue
            wires[key] = (upstream, output, keys.get(key, line))
        return wires

    # --- the whole graph ----------------------------------------------------------------------
    def _cross_check(self, drafts: list[_Draft]) -> None:
        by_name: dict[str, _Draft] = {}
        by_ref: dict[str, _Draft] = {}
        by_place: dict[tuple[Path, str], _Draft] = {}
        for d in drafts:
            if d.name in by_name:
                self.problem(d.line, f"member {d.name!r}: duplicate name (first at line {by_name[d.name].line})")
                continue
            by_name[d.name] = d
            if d.ref in by_ref:
                self.problem(d.at("ref"), f"member {d.name!r}: ref {d.ref!r} is also "
                             f"member {by_ref[d.ref].name!r}'s: two members would share one record")
            by_ref.setdefault(d.ref, d)
            if d.directory is not None:
                place = (d.directory, d.workspace or "default")
                if place in by_place:
                    self.problem(d.at("path"), f"member {d.name!r}: same module "
                                 f"directory as {by_place[place].name!r} without a distinct "
                                 "`workspace:` (each would overwrite the other's state)")
                by_place.setdefault(place, d)
        for d in by_name.values():
            self._check_links(d, by_name)
        deps = {d.name: tuple(u for u in d.depends_on if u in by_name) for d in by_name.values()}
        try:
            graphlib.TopologicalSorter(deps).prepare()
        except graphlib.CycleError as err:
            cycle = list(err.args[1])
            first = by_name[cycle[0]]
            self.problem(first.at("depends_on"),
                         f"depends_on forms a cycle: {' -> '.join(cycle)}")

    def _check_links(self, d: _Draft, by_name: Mapping[str, _Draft]) -> None:
        who = f"member {d.name!r}"
        at = d.at
        for up in d.depends_on:
            if up == d.name:
                self.problem(at("depends_on"), f"{who}: depends_on names the member itself")
            elif up not in by_name:
                self.problem(at("depends_on"), f"{who}: depends_on names unknown member {up!r} "
                             f"(members: {', '.join(by_name)})")
        if d.owned_by is not None:
            if d.owned_by not in by_name or d.owned_by == d.name:
                self.problem(at("owned_by"), f"{who}: owned_by names {d.owned_by!r}, which is not "
                             "another member of this stack")
            elif d.owned_by not in d.depends_on:
                self.problem(at("owned_by"), f"{who}: owned_by {d.owned_by!r} must also be in "
                             "depends_on (an owned module is created after its owner)")
        if d.directory is None:
            return
        try:
            specs = read_variables(d.directory, self.hcl_cache, tofu=self.tofu)
        except UsageError as err:
            self.problem(at("path"), f"{who}: {err.message}")
            return
        declared = ", ".join(sorted(specs)) or "no variables"
        for key in d.inputs:
            if key not in specs:
                self.problem(at("inputs"), f"{who}: inputs.{key}: the module declares no variable "
                             f"{key!r} (it declares: {declared})")
        for key, (upstream, output, line) in d.inputs_from.items():
            if key not in specs:
                self.problem(line, f"{who}: inputs_from.{key}: the module declares no variable "
                             f"{key!r} (it declares: {declared})")
            if key in d.inputs:
                self.problem(line, f"{who}: inputs_from.{key}: also set under inputs; keep one")
            d.wires[key] = wire = self._wire(who, key, upstream, output, line, d, by_name)
            if wire is not None and wire.sensitive and key in specs and not specs[key].sensitive:
                # The engine would take the value as plain and show it: in plan events,
                # in any output built from it, so in the record and events.jsonl.
                self.problem(line, f"{who}: inputs_from.{key}: upstream output {wire} is "
                             f"sensitive, but variable {key!r} is not: declare it "
                             f"`sensitive = true` in {d.directory} (a secret is never taken "
                             "as a plain value)")
        own = module_layers(d.directory, specs)  # TF_VAR_, the module's tfvars: the engine reads them
        engine_sets = set(specs) if any(layer.opaque for layer in own) else {n for layer in own for n in layer.values}
        missing = [n for n, s in sorted(specs.items())
                   if s.required and n not in d.inputs and n not in d.inputs_from and n not in engine_sets]
        if missing and self.read_only:  # e.g. a deployment secret the workers' TF_VAR_ give at apply time
            self.unresolved.append(f"{who}: {', '.join(map(repr, missing))}")
        elif missing:
            self.problem(at("name"), f"{who}: required input(s) {', '.join(map(repr, missing))} "
                         "set by neither inputs nor inputs_from")
        elif all(k in specs for k in (*d.inputs, *d.inputs_from)):
            wired = {k: "<wired>" for k in d.inputs_from}
            try:  # the same transport checks a run makes (e.g. a list for a string variable)
                resolve_inputs(specs, stack_inputs={**d.inputs, **wired},
                                          stack_source=f"{who} inputs", base_layers=own)
            except UsageError as err:
                self.problem(at("inputs"), err.message)

    def _wire(self, who: str, key: str, upstream: str, output: str, line: int, d: _Draft,
              by_name: Mapping[str, _Draft]) -> Wire | None:
        where = f"{who}: inputs_from.{key}"
        source = by_name.get(upstream)
        if source is None:
            self.problem(line, f"{where}: unknown member {upstream!r}")
            return None
        if upstream not in d.depends_on:
            self.problem(line, f"{where}: {upstream!r} must also be in depends_on (outputs flow "
                         "only from upstreams that finished first)")
        if source.directory is None:
            return None
        try:
            outputs = read_outputs(source.directory, self.hcl_cache, tofu=self.tofu)
        except UsageError:
            return None  # reported against the upstream itself
        if output not in outputs:
            self.problem(line, f"{where}: upstream {upstream!r} declares no output {output!r} "
                         f"(it declares: {', '.join(sorted(outputs)) or 'no outputs'})")
            return None
        return Wire(upstream, output, outputs[output].sensitive)


@dataclass
class _Draft:
    """A member while it is being validated."""

    name: str
    line: int
    keys: dict[str, int]
    ref: str = ""
    directory: Path | None = None
    depends_on: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)
    inputs_from: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    wires: dict[str, Wire | None] = field(default_factory=dict)
    owned_by: str | None = None
    retain: bool = False
    workspace: str | None = None

    def at(self, key: str) -> int:
        """The line of a field, else the member's own."""
        return self.keys.get(key, self.line)

    def freeze(self) -> Member:
        assert self.directory is not None
        return Member(
            name=self.name, directory=self.directory, module_ref=self.ref, depends_on=self.depends_on,
            inputs=dict(self.inputs), inputs_from={k: w for k, w in self.wires.items() if w is not None},
            owned_by=self.owned_by, retain_on_destroy=self.retain, workspace=self.workspace,
        )


def _is_segment(name: Any) -> TypeGuard[str]:
    """One module_ref segment by modules.validate_ref's rules (so not '.' or '..'); '/' would
    make two segments."""
    if not isinstance(name, str) or "/" in name:
        return False
    try:
        validate_ref(name)
    except UsageError:
        return False
    return True


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def _unquoted(problem: str) -> str:
    """PyYAML's problem text without the tokens it quotes (an alias or a tag name may be a
    secret); one-character quotes such as expected ':' carry the hint and stay."""
    return re.sub(r"'[^']{2,}'|\"[^\"]{2,}\"", "'…'", problem)


def load_stack(path: Path | str, hcl_cache: Path | None = None, read_only: bool = False, tofu: bool = False) -> Stack:
    """Read and validate `path`; UsageError (exit 2) listing every problem found.

    hcl_cache: where parsed module variables/outputs may be kept between runs (the
    runtime root's cache), as `declarations.read_variables` does for a module run.
    read_only: for commands that change nothing (`stack status`, `stack graph`, `report`,
    `reconcile --stack` without `--write`): a required input no source here sets (a secret
    the workers' environment gives at apply time) is noted and listed in `Stack.unresolved`,
    not refused, so a report job without the deployment's secrets can still report.
    tofu: the engine is OpenTofu, whose loader also reads `.tofu` files (Runtime.reads_tofu).
    """
    return StackLoader(Path(path), hcl_cache, read_only, tofu).load()
