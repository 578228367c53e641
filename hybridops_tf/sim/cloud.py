"""What each provider call does to the simulated cloud: faults first, then the store.

Kept free of grpc and the protocol so the behaviour the engine sees (created? state
returned? error?) is unit-testable in-process. States here are plain dicts; the adapter in
`resources.py` drops values that are still unknown before calling in, so a missing key
means "computed by the cloud".
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridops_tf.sim.faults import (
    GATE_POLL_SECONDS,
    FaultMode,
    FaultRule,
    HangAt,
    OnStop,
    claim,
    faults_path_from_env,
    load_faults,
)
from hybridops_tf.sim.kinds import Kind, kind_of
from hybridops_tf.sim.store import (
    CallEntry,
    MissingParentError,
    SimObject,
    SimStore,
    atomic_write_text,
    utc_now,
)

WATCH_FILE_ENV = "HYOPS_SIM_WATCH_FILE"
HEALTH_PASSING = "passing"
_FAILS_NOTHING_DONE = (FaultMode.FAIL_BEFORE_CREATE, FaultMode.FAIL_DELETE, FaultMode.FAIL)


@dataclass(frozen=True)
class Outcome:
    """The answer to the engine: a state (or None) and, when something failed, an error."""

    state: dict[str, Any] | None
    error: str | None = None
    detail: str = ""


class Abandoned(str):
    """What `_hang` returns when a hang gave up because the provider was asked to stop (or
    is leaving): the call answers as if it had been cut off, with this text as the error."""

    __slots__ = ()


def secret_digest(value: Any) -> str | None:
    """sha256 of a sensitive value: the cloud keeps this, never the secret itself."""
    return None if value is None else hashlib.sha256(str(value).encode()).hexdigest()


def vm_ip(cidr: str | None, object_id: str) -> str:
    """A stable host address inside the network's CIDR, derived from the vm id."""
    try:
        net = ipaddress.ip_network(cidr or "10.0.0.0/16", strict=False)
    except ValueError:
        net = ipaddress.ip_network("10.0.0.0/16")
    hosts = max(1, net.num_addresses - 2)
    return str(net.network_address + 1 + int(object_id.rsplit("-", 1)[-1], 16) % hosts)


@dataclass
class SimCloud:
    """The store plus the fault rules loaded when the provider was configured.

    `faults_run` names the run of the faults file they came from (FaultsFile.run): `times`
    is counted per run, so an unchanged file keeps its counts and a rewritten one re-arms.
    """

    store: SimStore
    rules: list[FaultRule] = field(default_factory=list)
    faults_file: Path | None = None
    watch_file: Path | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    faults_run: str = ""
    # set by the provider process (sim/lifecycle.py): StopProvider arrived / Shutdown arrived
    stopping: threading.Event | None = None
    leaving: threading.Event | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SimCloud:
        """Build from HYOPS_SIM_ROOT / HYOPS_SIM_FAULTS / HYOPS_SIM_WATCH_FILE.

        Raises SimRootError or FaultsError (one-line messages) so the provider can turn
        them into a diagnostic instead of a traceback.
        """
        env = os.environ if environ is None else environ
        store = SimStore.from_env(env)
        store.ensure()
        given = faults_path_from_env(env)
        faults = load_faults(given) if given is not None else None
        watch = env.get(WATCH_FILE_ENV, "").strip()
        cloud = cls(store, watch_file=Path(watch) if watch else None)
        if faults is not None:
            cloud.rules, cloud.faults_file, cloud.faults_run = faults.rules, faults.path, faults.run
        return cloud

    # ----- helpers -----
    def _claim(self, type_name: str, name: str | None, op: str) -> FaultRule | None:
        if not self.rules:
            return None
        return claim(self.rules, self.store, type_name, name, op, self.faults_run)

    def _log(
        self, op: str, type_name: str, name: Any, object_id: Any, rule: FaultRule | None
    ) -> None:
        watching = self.watch_file is not None and op in ("create", "delete")
        watched = None
        if watching and self.watch_file is not None:
            try:
                watched = self.watch_file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                watched = None
        self.store.record_call(
            CallEntry(
                op=op,
                type=type_name,
                name=name if isinstance(name, str) else None,
                id=object_id if isinstance(object_id, str) else None,
                fault=str(rule.mode) if rule else None,
                watched=watched,
                watching=watching,
            )
        )

    def _fault(self, rule: FaultRule, type_name: str, name: Any, what: str) -> tuple[str, str]:
        source = f" in {self.faults_file}" if self.faults_file else ""
        summary = f'sim: injected fault {rule.mode} on {type_name} "{name}"'
        return summary, f"{rule.describe()}{source} fired: {what}"

    @staticmethod
    def _hangs(rule: FaultRule | None, at: HangAt) -> bool:
        return rule is not None and rule.mode is FaultMode.HANG and rule.at is at

    def _hang(self, rule: FaultRule, op: str, type_name: str, name: Any) -> str | None:
        """Hang as the rule says; None to proceed, else the error to answer with (one line):
        `hang_started` could not be written, or an Abandoned when the hang gave up.

        Without `hang_until` this is one sleep of `seconds`; with it, a cheap poll for the
        file, given up after `seconds` (the call then proceeds as if released). In a provider
        process (`stopping` set) the wait also ends on StopProvider for `on_stop: abort`, and
        on Shutdown whatever the rule: a process that is leaving does not go on to change
        the cloud behind an engine that stopped listening.
        """
        if rule.hang_started is not None:
            signal = {
                "pid": os.getpid(),
                "op": op,
                "type": type_name,
                "name": name if isinstance(name, str) else None,
                "time": utc_now(),
            }
            try:
                atomic_write_text(rule.hang_started, json.dumps(signal) + "\n")
            except OSError as exc:
                return f"cannot write hang_started file {rule.hang_started}: {exc.strerror or exc}"
        if rule.hang_until is None and self.stopping is None:
            self.sleep(rule.seconds)
            return None
        deadline = self.clock() + rule.seconds
        while rule.hang_until is None or not rule.hang_until.exists():
            if gave_up := self._gave_up(rule, op):
                return gave_up
            left = deadline - self.clock()
            if left <= 0:
                break
            self.sleep(min(GATE_POLL_SECONDS, left))
        return self._gave_up(rule, op)  # a stop that came with the release still counts

    def _gave_up(self, rule: FaultRule, op: str) -> Abandoned | None:
        if self.leaving is not None and self.leaving.is_set():
            return Abandoned(f"the provider was shut down while the {op} hung")
        if rule.on_stop is OnStop.ABORT and self.stopping is not None and self.stopping.is_set():
            done = "its effect stands, its answer is lost" if rule.at is HangAt.AFTER else "nothing was done"
            return Abandoned(f"the engine asked the provider to stop while the {op} hung; {done}")
        return None

    def note_stop(self) -> None:
        """Log the engine's StopProvider to this provider as a call (op `stop`)."""
        self._log("stop", "", None, None, None)

    @staticmethod
    def _state(kind: Kind, obj: SimObject, known: Mapping[str, Any]) -> dict[str, Any]:
        """Engine state from a stored object; secrets come back only if their digest matches."""
        state: dict[str, Any] = {"id": obj.id, "name": obj.name}
        for attr in kind.attrs:
            state[attr] = obj.attributes.get(attr)
        for attr in kind.secrets:
            stored = obj.attributes.get(f"{attr}_sha256")
            value = known.get(attr)
            state[attr] = value if stored is not None and secret_digest(value) == stored else None
        return state

    def _attributes(self, kind: Kind, values: Mapping[str, Any], object_id: str) -> dict[str, Any]:
        attributes = {attr: values.get(attr, kind.defaults.get(attr)) for attr in kind.attrs}
        for attr in kind.secrets:
            attributes[f"{attr}_sha256"] = secret_digest(values.get(attr))
        if kind.type == "sim_vm" and attributes.get("ip") is None:
            network = self.store.get(str(attributes.get("network_id") or "net-missing"))
            cidr = network.attributes.get("cidr") if network is not None else None
            attributes["ip"] = vm_ip(cidr, object_id)
        if kind.type == "sim_health_check" and attributes.get("status") is None:
            attributes["status"] = HEALTH_PASSING
        return attributes

    # ----- the four lifecycle calls and import -----
    def create(self, type_name: str, planned: Mapping[str, Any]) -> Outcome:
        kind = kind_of(type_name)
        name = planned.get("name")
        rule = self._claim(type_name, name, "create")
        object_id = self.store.new_id(type_name)
        self._log("create", type_name, name, object_id, rule)
        if rule is not None and self._hangs(rule, HangAt.BEFORE):
            if problem := self._hang(rule, "create", type_name, name):
                return Outcome(None, *self._fault(rule, type_name, name, problem))
        elif rule is not None and rule.mode in _FAILS_NOTHING_DONE:
            return Outcome(None, *self._fault(rule, type_name, name, "nothing was created"))
        attributes = self._attributes(kind, planned, object_id)
        try:
            obj = self.store.create(type_name, str(name), attributes, object_id)
        except MissingParentError as exc:
            return Outcome(None, f'sim: cannot create {type_name} "{name}"', str(exc))
        state = self._state(kind, obj, planned)
        if rule is not None and self._hangs(rule, HangAt.AFTER):
            if problem := self._hang(rule, "create", type_name, name):
                return Outcome(None, *self._fault(rule, type_name, name, f"{obj.id}: {problem}"))
        if rule is not None and rule.mode is FaultMode.FAIL_AFTER_CREATE:
            what = f"object {obj.id} was created, then the call reported an error"
            return Outcome(state, *self._fault(rule, type_name, name, what))
        if rule is not None and rule.mode is FaultMode.LOSE_RESPONSE:
            what = "the response was lost; the object may or may not exist"
            return Outcome(None, *self._fault(rule, type_name, name, what))
        return Outcome(state)

    def plan(self, type_name: str, planned: Mapping[str, Any]) -> Outcome | None:
        """A fault on the engine's plan of an object: None to plan as asked, else the error to
        answer with (a `hang` proceeds when released, as elsewhere). Nothing is logged unless
        a rule fires: plans are many and change nothing."""
        name = planned.get("name")
        rule = self._claim(type_name, name if isinstance(name, str) else None, "plan")
        if rule is None:
            return None
        self._log("plan", type_name, name, planned.get("id"), rule)
        if rule.mode is FaultMode.HANG:
            problem = self._hang(rule, "plan", type_name, name)
            return Outcome(None, *self._fault(rule, type_name, name, problem)) if problem else None
        return Outcome(None, *self._fault(rule, type_name, name, "nothing was planned"))

    def read(self, type_name: str, current: Mapping[str, Any]) -> Outcome:
        kind = kind_of(type_name)
        object_id, name = current.get("id"), current.get("name")
        rule = self._claim(type_name, name, "read")
        self._log("read", type_name, name, object_id, rule)
        if rule is not None and rule.mode is FaultMode.HANG:
            if problem := self._hang(rule, "read", type_name, name):
                return Outcome(dict(current), *self._fault(rule, type_name, name, problem))
        elif rule is not None:
            return Outcome(dict(current), *self._fault(rule, type_name, name, "nothing was read"))
        obj = self.store.get(object_id) if isinstance(object_id, str) and object_id else None
        if obj is None or obj.type != type_name:
            return Outcome(None)  # gone: the engine drops it from state / plans a create
        return Outcome(self._state(kind, obj, current))

    def update(
        self, type_name: str, current: Mapping[str, Any], planned: Mapping[str, Any]
    ) -> Outcome:
        kind = kind_of(type_name)
        object_id, name = current.get("id"), planned.get("name")
        rule = self._claim(type_name, name, "update")
        self._log("update", type_name, name, object_id, rule)
        if rule is not None and self._hangs(rule, HangAt.BEFORE):
            if problem := self._hang(rule, "update", type_name, name):
                return Outcome(dict(current), *self._fault(rule, type_name, name, problem))
        elif rule is not None and rule.mode is not FaultMode.HANG:
            return Outcome(
                dict(current), *self._fault(rule, type_name, name, "nothing was changed")
            )
        obj = self.store.get(object_id) if isinstance(object_id, str) and object_id else None
        if obj is None:
            detail = f"{type_name} {object_id} no longer exists; refresh to plan its re-creation"
            return Outcome(dict(current), f'sim: cannot update {type_name} "{name}"', detail)
        merged = {**obj.attributes, **{k: v for k, v in planned.items() if k in kind.attrs}}
        merged.update({k: planned.get(k) for k in kind.secrets})
        new = self.store.update(obj.id, str(name), self._attributes(kind, merged, obj.id))
        if new is None:
            return Outcome(dict(current), f"sim: {type_name} {object_id} vanished during update")
        state = self._state(kind, new, planned)
        if rule is not None and self._hangs(rule, HangAt.AFTER):
            if problem := self._hang(rule, "update", type_name, name):
                answered = dict(current) if isinstance(problem, Abandoned) else state  # lost answer
                return Outcome(answered, *self._fault(rule, type_name, name, problem))
        return Outcome(state)

    def delete(self, type_name: str, current: Mapping[str, Any]) -> Outcome:
        object_id, name = current.get("id"), current.get("name")
        rule = self._claim(type_name, name, "delete")
        self._log("delete", type_name, name, object_id, rule)
        if rule is not None and self._hangs(rule, HangAt.BEFORE):
            if problem := self._hang(rule, "delete", type_name, name):
                return Outcome(dict(current), *self._fault(rule, type_name, name, problem))
        elif rule is not None and rule.mode is not FaultMode.HANG:
            what = f"object {object_id} was not deleted"
            return Outcome(dict(current), *self._fault(rule, type_name, name, what))
        if isinstance(object_id, str) and object_id:
            self.store.delete(object_id)
        if rule is not None and self._hangs(rule, HangAt.AFTER):
            if problem := self._hang(rule, "delete", type_name, name):
                answered = dict(current) if isinstance(problem, Abandoned) else None  # lost answer
                return Outcome(answered, *self._fault(rule, type_name, name, problem))
        return Outcome(None)

    def restart_vm(self, action_type: str, vm_id: str) -> Outcome:
        """The `sim_vm_restart` action (sim/actions.py): logged as op `invoke` with the vm's id
        in calls.jsonl (the restart a test reads), unless a fault fails it or the vm is gone.
        The vm's state does not change: an action changes nothing the engine keeps."""
        obj = self.store.get(vm_id) if vm_id.startswith("vm-") and "/" not in vm_id else None
        name = obj.name if obj is not None else None
        rule = self._claim(action_type, name, "invoke")
        if rule is not None and rule.mode is FaultMode.HANG:
            if problem := self._hang(rule, "invoke", action_type, name):
                self._log("invoke", action_type, name, None, rule)
                return Outcome(None, *self._fault(rule, action_type, name, problem))
        elif rule is not None:
            self._log("invoke", action_type, name, None, rule)
            return Outcome(None, *self._fault(rule, action_type, name, f"vm {vm_id} was not restarted"))
        if obj is None or obj.type != "sim_vm":
            return Outcome(None, f"sim: cannot restart vm {vm_id!r}", f'no live sim_vm has id "{vm_id}"')
        self._log("invoke", action_type, name, obj.id, None)
        return Outcome(None)

    def import_(self, type_name: str, object_id: str) -> Outcome:
        kind = kind_of(type_name)
        self._log("import", type_name, None, object_id, None)
        obj = None
        well_formed = object_id.startswith(kind.prefix + "-") and "/" not in object_id
        if well_formed:
            obj = self.store.get(object_id)
        if obj is None and well_formed:
            # as an SDK provider's passthrough import: the id alone, then the engine's read finds
            # nothing and the engine says "Cannot import non-existent remote object"
            return Outcome({"id": object_id, "name": None, **dict.fromkeys((*kind.attrs, *kind.secrets))})
        if obj is None or obj.type != type_name:
            detail = f'no live {type_name} has id "{object_id}" (see `hyops sim ls`)'
            return Outcome(None, f'sim: cannot import {type_name} "{object_id}"', detail)
        return Outcome(self._state(kind, obj, {}))
