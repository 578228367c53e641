"""A member's inputs: its `inputs`, plus `inputs_from` upstream outputs (docs/contract.md: Inputs, Stacks).

Apply wires only from upstreams that succeeded in this run (or were skipped as ok), using
the outputs their records hold. A sensitive output is never in a record, so it is read
from the upstream's state (`show -json`) at the moment of wiring and handed over in memory:
the member marks that input sensitive, and it is redacted everywhere hyops writes. The
receiving variable must be declared sensitive (the loader refuses a stack where it is not,
and so does apply, should a record call an output sensitive that its HCL did not).

Destroy needs the module's required variables too, though nothing new is built. It uses
what the member was last run with (rerun.inputs.yml, which describes what exists), then
the outputs its upstreams' records hold (previous_outputs after their verified destroy),
then the stack file's inputs. It never invents a value: a required input nobody can supply
fails that member with a message saying which and why.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hybridops_tf.base.errors import HyopsError, OperationFailed
from hybridops_tf.base.redact import is_placeholder
from hybridops_tf.engine.state import OutputValue, StateFormatError, parse_state
from hybridops_tf.inputs.values import load_inputs_file, module_layers, read_variables
from hybridops_tf.record.advice import ADVISE, Where, display_dir
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.model import Member, Stack, Wire

_SECRET_MARK = {"sensitive": True}  # how a record stores a sensitive output


@dataclass(frozen=True)
class Wired:
    """Inputs for one member's run; `sensitive` names those that must never touch disk."""

    values: dict[str, Any]
    sensitive: frozenset[str] = frozenset()


class Wiring:
    """Shared by the member threads; state reads are cached per upstream for one run."""

    def __init__(self, stack: Stack, runtime: Runtime) -> None:
        self.stack = stack
        self.runtime = runtime
        self.store = runtime.store
        self._lock = threading.Lock()
        self._state_outputs: dict[str, Mapping[str, OutputValue]] = {}

    def for_apply(self, member: Member, upstream_outputs: Mapping[str, Mapping[str, Any] | None]) -> Wired:
        """upstream_outputs: the recorded outputs of each upstream that succeeded."""
        values = dict(member.inputs)
        sensitive: set[str] = set()
        for key, wire in member.inputs_from.items():
            outputs = upstream_outputs.get(wire.upstream) or {}
            recorded = outputs.get(wire.output, _MISSING)
            if wire.sensitive or recorded == _SECRET_MARK:
                self._refuse_plain_secret(member, key, wire)
                values[key] = self._secret(wire)
                sensitive.add(key)
            elif recorded is _MISSING:
                raise OperationFailed(
                    f"upstream {wire.upstream!r} finished without output {wire.output!r}, "
                    f"so input {key!r} of {member.name!r} has no value; nothing was run")
            else:
                values[key] = recorded
        return Wired(values, frozenset(sensitive))

    def for_destroy(self, member: Member) -> Wired:
        specs = read_variables(member.directory, tofu=self.runtime.reads_tofu())
        values = dict(member.inputs)
        sensitive: set[str] = set()
        unknown: dict[str, str] = {}
        for key, wire in member.inputs_from.items():
            recorded = self._recorded_output(wire)
            if recorded is _MISSING:
                unknown[key] = f"the record of {wire.upstream!r} holds no output {wire.output!r}"
            elif wire.sensitive or recorded == _SECRET_MARK:
                try:
                    values[key] = self._secret(wire)
                    sensitive.add(key)
                except HyopsError as err:
                    unknown[key] = err.message
            else:
                values[key] = recorded
        for key, value in self._rerun_inputs(member).items():
            if key in specs and not is_placeholder(value):
                values[key] = value  # what exists was built with these
                unknown.pop(key, None)
        own = module_layers(member.directory, specs)  # TF_VAR_, the module's tfvars
        if not any(layer.opaque for layer in own):
            values_known = set(values) | {n for layer in own for n in layer.values}
        else:
            values_known = set(specs)
        missing = [n for n, s in sorted(specs.items()) if s.required and n not in values_known]
        if missing:
            why = "; ".join(f"{n}: {unknown[n]}" for n in missing if n in unknown)
            raise OperationFailed(
                f"cannot {('refresh' if member.owned_by else 'destroy')} {member.module_ref}: no "
                f"value for required input(s) {', '.join(missing)}" + (f" ({why})" if why else "")
                + f"; run `{ADVISE.destroy(_given(member))}`")
        return Wired({k: v for k, v in values.items() if k in specs}, frozenset(sensitive))

    def state_is_empty(self, member: Member) -> bool:
        """True only when `show -json` proves the member's state holds no managed object."""
        try:
            doc = self.runtime.engine_for(member.target, None, member.workspace,
                                          None).show_state_doc()
            return parse_state(doc).is_empty
        except (HyopsError, StateFormatError):
            return False

    def _refuse_plain_secret(self, member: Member, key: str, wire: Wire) -> None:
        """A secret only goes into a variable declared sensitive. load_stack refuses such a
        wire from the HCL (exit 2); this also covers an output the upstream's record marks
        sensitive where its HCL did not say so: the engine would show the value in the
        member's plan and outputs, so in its record and events.jsonl."""
        spec = read_variables(member.directory, self.runtime.hcl_cache(),
                                         tofu=self.runtime.reads_tofu()).get(key)
        if spec is not None and not spec.sensitive:
            raise OperationFailed(
                f"upstream output {wire} is sensitive, but variable {key!r} of {member.name!r} is "
                f"not: declare it `sensitive = true` in {member.directory}; nothing was run")

    # --- sources ----------------------------------------------------------------------------
    def _recorded_output(self, wire: Wire) -> Any:
        upstream = self.stack.member(wire.upstream)
        rec = self.store.read(upstream.key)
        if rec is None:
            return _MISSING
        for source in (rec.outputs, rec.previous_outputs):
            if source and wire.output in source:
                return source[wire.output]
        return _MISSING

    def _secret(self, wire: Wire) -> Any:
        """A sensitive output's value, from the upstream's state: in memory only."""
        upstream = self.stack.member(wire.upstream)
        with self._lock:
            cached = self._state_outputs.get(upstream.name)
        if cached is None:
            doc = self.runtime.engine_for(upstream.target, None, upstream.workspace,
                                          None).show_state_doc()
            try:
                cached = parse_state(doc).outputs
            except StateFormatError as err:
                raise OperationFailed(f"cannot read the state of {upstream.module_ref}: {err}") from None
            with self._lock:
                self._state_outputs[upstream.name] = cached
        out = cached.get(wire.output)
        if out is None or out.value is None:
            raise OperationFailed(f"the state of {upstream.module_ref} holds no value for sensitive "
                                  f"output {wire.output!r}")
        return out.value

    def _rerun_inputs(self, member: Member) -> dict[str, Any]:
        path = self.runtime.rerun_inputs_path(member.key)
        if not path.is_file():
            return {}
        try:
            return load_inputs_file(path)
        except HyopsError:
            return {}


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def _given(member: Member) -> Where:
    """The member as a person reaches it, the missing inputs left for them to give."""
    return Where(member.module_ref, display_dir(member.directory), member.workspace,
                 inputs_args=("--var", "NAME=..."))
