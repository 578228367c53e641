"""The findings for objects the record knows (or reconcile saw another writer make) that no state
holds: `state_missing` and `lost_from_state` (docs/recovery.md: One gate, Another writer).

Their advice is where an object is most easily lost twice: an apply before the import makes a
second one, and a `state rm` of an object the record holds leaves the gate no proof. So each
way out is named in order, for the provider in use (a `hyops sim` command only for the sim's
types, an import only for a type the engine can import), with the choice left to a person where
two objects claim one address.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridops_tf.engine import features
from hybridops_tf.engine.addresses import command_address
from hybridops_tf.reconcile.model import LISTED, Alternative, Code, Finding, ModuleEvidence, finding, names
from hybridops_tf.record import gate
from hybridops_tf.record.advice import Commands
from hybridops_tf.record.model import entry_address
from hybridops_tf.record.objects import state_view


def state_missing(ev: ModuleEvidence, missing: Mapping[str, str | None], cmd: Commands) -> Finding:
    """Objects the record knows by id that no state holds. One whose address now holds another
    object (two objects for one address) cannot be imported back there, and an apply would
    record the state's one in its place: the advice names both and lets a person choose."""
    view = state_view(ev.state.resources) if ev.state is not None else {}
    taken = {a: view[a].id for a, i in missing.items() if i and a in view and view[a].id not in (None, i)}
    addresses = list(missing)
    seen = {s.id: s for s in ev.seen_outside or () if s.id in missing.values()}  # never the record's
    known = [(a, i) for a, i in missing.items() if i not in seen]
    shown = ", ".join(f"{a} ({i})" if i else a for a, i in known[:LISTED])
    more = f" and {len(known) - LISTED} more" if len(known) > LISTED else ""
    actions = [cmd.push_errored(ev.where)] if ev.errored_state else []
    refused = gate.not_importable(ev.record)  # the engine said it cannot import these types
    importing: dict[str, str] = {}  # one object per address: a second kept at `ADDR (missing ID)` waits its turn
    for a, i in missing.items():
        if i and a not in taken and resource_type(a) not in refused:
            importing.setdefault(entry_address(a), i)
    actions += [cmd.import_(ev.where, a, i) for a, i in importing.items()]
    saw = ", ".join(f"{s.address} ({s.id}, at {s.seen_at})" for s in list(seen.values())[:LISTED])
    detail = "; ".join(part for part in (
        f"the record says {shown}{more} exist(s)" if known else "",
        f"reconcile saw another writer put {saw} in the state, which the record never held" if seen else "") if part)
    detail += (" but no state holds them, under any address: the state was lost, rewritten (a state older than "
               "them put back) or never saved; adopt each object back with --import (an import that finds no such "
               "object in the provider makes hyops forget it)")
    by_identity = _identity_imports(ev, missing, taken, cmd)
    if not taken:
        # an advised --import settles its id either way (adopted, or found gone: operation/steps.py);
        # a forget is the way only where the engine cannot import the type
        gone = [Alternative(cmd.forget_missing(ev.where, i), f"the engine cannot import {resource_type(a)}: "
                            f"{i} is gone: check it in the provider{_sim_check(ev, a, cmd)} first; the record "
                            "forgets it (then apply)") for a, i in missing.items() if i and resource_type(a) in refused]
        return finding(ev, Code.STATE_MISSING, detail + (" (or forget it, once checked gone)" if gone else ""),
                        actions, addresses, alternatives=[*by_identity, *gone])
    vanished = _vanished(ev)
    choices: list[Alternative] = []
    for address, now in taken.items():
        lost = str(missing[address])
        whose = "the one reconcile saw" if lost in seen else "the record's"
        if address in vanished:  # the state's object is gone: only the record's is live
            detail += (f"; the state holds {now} at {address}, which the refresh shows gone, and {whose} "
                       f"{lost} (likely its replacement, a state older than it put back) is held by no state "
                       f"and may live: a refresh-only apply lets the state go of {now} (the refresh is the proof "
                       f"it is gone), then {lost} is adopted back; an apply now would make a second one")
            let_go = cmd.refresh(ev.where)  # one refresh lets go of every gone object
            actions += [*([] if let_go in actions else [let_go]), cmd.import_(ev.where, address, lost)]
            continue
        detail += (f"; two objects for one address: the state holds {now} at {address}, and {whose} {lost} "
                   f"is held by no state (live and unmanaged unless deleted); one of them must go, and an apply "
                   f"now would record {now} alone")
        choices += [
            Alternative(cmd.forget_missing(ev.where, lost), f"keep {now} (the state's): {lost} is likely replaced "
                        f"by it (another writer's apply); check it in the provider{_sim_check(ev, address, cmd)}, "
                        f"and if it still lives delete it there{_sim_rm(ev, address, lost, cmd)}; then the record "
                        "forgets it"),
            Alternative(cmd.state_rm(ev.where, typed(ev, address)),
                        f"keep {lost} ({whose}): the state lets go of {now}; "
                        f"then {cmd.import_(ev.where, address, lost)}, and delete {now} in the provider"
                        f"{_sim_rm(ev, address, str(now), cmd)}")]
    return finding(ev, Code.STATE_MISSING, detail, actions, addresses, alternatives=[*choices, *by_identity])


def typed(ev: ModuleEvidence, address: str) -> str:
    """A recorded address as a raw engine command must name it: in HCL's spelling, which every
    engine parses (engine/addresses.py), where the record keeps the engine's printed one."""
    version = ev.record.engine.version if ev.record is not None and ev.record.engine is not None else None
    return command_address(address, features.key_spelling_of(version))


SIM_TYPES = frozenset({"sim_network", "sim_vm", "sim_config", "sim_health_check", "sim_vm_restart"})
resource_type = gate.resource_type


def _sim_rm(ev: ModuleEvidence, address: str, object_id: str, cmd: Commands) -> str:
    """` (hyops sim rm ID)` where the object is the sim's; '' for any other provider's type."""
    return f" ({cmd.sim_rm(object_id)})" if ev.where.uses_sim and resource_type(address) in SIM_TYPES else ""


def _sim_check(ev: ModuleEvidence, address: str, cmd: Commands) -> str:
    return f" ({cmd.sim_ls()})" if ev.where.uses_sim and resource_type(address) in SIM_TYPES else ""


def _vanished(ev: ModuleEvidence) -> set[str]:
    """Addresses whose object the refresh-only plan shows deleted outside the engine."""
    return {c.address for c in ev.refresh.drift if c.action == "delete"} if ev.refresh is not None else set()


def _identity_imports(ev: ModuleEvidence, missing: Mapping[str, str | None], taken: Mapping[str, Any],
                      cmd: Commands) -> list[Alternative]:
    """Where the record knows the provider's identity of a lost object and its engine takes an
    `import` block with `identity` (>= 1.12), the block that adopts it by that key: the
    provider's own name for the object, which `--import` (the engine's `import` command, by id
    alone) cannot pass."""
    rec = ev.record
    if rec is None or rec.engine is None or not features.takes_import_identity(rec.engine.version):
        return []
    entries = rec.resources or {}
    blocks = [Commands.import_block(a, identity) for a, i in missing.items() if a not in taken and i
              for identity in [getattr(entries.get(a), "identity", None)] if identity]
    if not blocks:
        return []
    # run as printed without the block, the apply is refused (state_missing): never a second object;
    # with it, the block adopts the address, which lets the apply through (operation/guards.guard_missing)
    return [Alternative(cmd.apply(ev.where), "instead of --import, by the provider's "
                        f"identity (this engine, {rec.engine.version}, takes it): add to the configuration\n"
                        + "\n".join(blocks) + "\nthen apply (the plan shows each import; the block may stay)")]


def lost_from_state(ev: ModuleEvidence, lost: Mapping[str, str], cmd: Commands) -> Finding:
    """Objects the engine dropped from state when their update failed (rules.lost_from_state):
    they live, so the only advice is the import that puts each back; an apply before it would
    create a second object beside the live one."""
    listed = [f"{a} ({i})" for a, i in lost.items()]
    them = "it" if len(listed) == 1 else "them"
    detail = (f"the last apply failed updating {names(listed)} and the engine dropped {them} "
              "from the state, though no delete was planned or completed (Terraform before 1.14.2 does so when "
              "an update fails on an early path, hashicorp/terraform#37981): the object lives, unmanaged; put "
              f"{them} back with --import before any apply (an apply now would create a second object)")
    actions = [cmd.push_errored(ev.where)] if ev.errored_state else []
    actions += [cmd.import_(ev.where, a, i) for a, i in lost.items()]
    return finding(ev, Code.LOST_FROM_STATE, detail, actions, list(lost))
