"""The words of a suspect orphan's finding once its lookups answered (docs/contract.md: Finding codes).

compare.py builds a suspect orphan's finding as it always did; when lookups were asked about
it, `amend` rewrites it from their verdicts (judge.py):
- every object accounted for, one or more found: `orphan_found`, naming each (id and
  attributes); the next action is `--write`, which imports each at its address;
- every lookup complete and none found: `suspect_orphan` saying the create made nothing;
  the next action is `--write`, which drops the orphan;
- candidates a person must choose between (several, shared with another orphan, not
  matchable, a second object at an address the state holds): `suspect_orphan` naming each,
  with one exact `--import ADDRESS=ID` per candidate as alternatives;
- a lookup that failed, hung, printed garbage or proved nothing: the finding as before,
  saying so.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hybridops_tf.reconcile.lookup.judge import UNNAMED
from hybridops_tf.reconcile.model import (
    Alternative,
    Code,
    Finding,
    ModuleEvidence,
)
from hybridops_tf.reconcile.verdict import Candidate, Judgement, OrphanLookup, Outcome
from hybridops_tf.record.advice import Commands

_SHOWN = 5  # candidates named in a detail before "and N more"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _object(candidate: Candidate) -> str:
    attrs = ", ".join(f"{k}={_short(v)}" for k, v in list(candidate.attributes.items())[:8])
    return f"{candidate.id} ({attrs})" if attrs else candidate.id


def _objects(candidates: tuple[Candidate, ...]) -> str:
    shown = "; ".join(_object(c) for c in candidates[:_SHOWN])
    return shown + (f" and {len(candidates) - _SHOWN} more" if len(candidates) > _SHOWN else "")


def _matched(ask: Judgement) -> str:
    return f" with {', '.join(ask.match)} as planned" if ask.match else ""


def said(ask: Judgement) -> str:
    """One sentence: what the lookup answered about one address."""
    lookup = f"the lookup {ask.source}"
    kind = f"type {ask.type}"
    if ask.outcome is Outcome.FAILED:
        return f"{lookup} failed: {ask.why}"
    if ask.outcome is Outcome.UNSUPPORTED:
        return f"{lookup} cannot list {kind}: {ask.why}; nothing was concluded or changed"
    if ask.outcome is Outcome.FOUND and ask.in_state:
        return (f"{lookup} found {_object(ask.kept[0])}, an object of {kind}{_matched(ask)} that no known state "
                f"or record holds: a second object besides the one the state holds at {ask.address}")
    if ask.outcome is Outcome.FOUND:
        return (f"{lookup} found {_object(ask.kept[0])}, the one object of {kind}{_matched(ask)} that no known "
                "state or record holds")
    if ask.outcome is Outcome.NONE:
        return (f"{lookup} lists every object of {kind} that could match, and not one{_matched(ask)} is free of "
                "every known state and record")
    if ask.outcome is Outcome.NOT_FOUND:
        return (f"{lookup} found no object of {kind}{_matched(ask)} that no known state or record holds, but it "
                "is not complete (it may not list every object), so that proves nothing")
    if ask.outcome is Outcome.CONTRADICTED:
        named = "; ".join(f"{ident}, held by {holder}" for ident, holder in ask.contradicted[:_SHOWN])
        return (f"{lookup} answered with {named}: an object of {kind}{_matched(ask)} whose id another state "
                "or record holds. The lookup and the states contradict each other, so nothing is concluded "
                "(not that the create made nothing): look for the create's object in the provider by hand")
    if ask.outcome is Outcome.SHARED:
        return (f"{lookup} found {_object(ask.kept[0])}, which is also a candidate of "
                f"{', '.join(ask.also_for)}: whose object it is cannot be told")
    if ask.outcome is Outcome.UNMATCHED:
        return (f"{lookup} found {_objects(ask.kept)}, but the plan gives no value for "
                f"{', '.join(ask.unplanned)} (known only once created, or sensitive), so none can be "
                "matched to the create")
    return (f"{lookup} found {len(ask.kept)} objects of {kind}{_matched(ask)} that no known state or record "
            f"holds: {_objects(ask.kept)}")


def _sentences(lookup: OrphanLookup) -> str:
    parts = [(f"{a.address}: " if lookup.orphan == UNNAMED else "") + said(a) for a in lookup.asks]
    if lookup.not_asked:
        parts.append(lookup.not_asked)
    kept = f" (what was asked and answered: run {lookup.run_id})" if lookup.run_id else ""
    return "; ".join(parts) + kept


def amend(finding: Finding, what: str, lookup: OrphanLookup, ev: ModuleEvidence, cmd: Commands) -> Finding:
    """The orphan's finding as its lookups' answers make it (see the module docstring)."""
    where = ev.where
    answered = _sentences(lookup)
    doc = lookup.to_dict()
    adopt = lookup.adoptable
    forget_alternatives = [a for a in finding.alternatives if "--forget-orphan" in a.command]
    if lookup.settled and adopt:
        names = ", ".join(f"{a.found.id} at {a.address}" for a in adopt if a.found is not None)
        drop = f", then drops {lookup.orphan}" if lookup.orphan == UNNAMED else ""
        return replace(finding, code=Code.ORPHAN_FOUND, detail=(
            f"{what}; {answered}. `--write` adopts {names} (the engine's import at that address{drop}); "
            "then the run can be finished"), next_actions=(cmd.write(where),), alternatives=(), lookup=doc)
    if lookup.settled:
        return replace(finding, detail=(
            f"{what}; {answered}: the create made nothing. `--write` drops the orphan, saying why"),
            next_actions=(cmd.write(where),), alternatives=(), lookup=doc)
    choices: list[Alternative] = []
    for ask in lookup.asks:
        if ask.outcome in (Outcome.FAILED, Outcome.UNSUPPORTED, Outcome.NONE, Outcome.NOT_FOUND,
                           Outcome.CONTRADICTED) or ask.adoptable:
            continue
        for candidate in ask.kept:
            if ask.in_state:
                if where.uses_sim:
                    choices.append(Alternative(cmd.sim_rm(candidate.id), f"{candidate.id} is the second object: "
                                               f"delete it, then --forget-orphan {ask.address}"))
                continue
            choices.append(Alternative(cmd.import_(where, ask.address, candidate.id),
                                       f"it is {_object(candidate)}: adopt it at {ask.address}"))
    if adopt:  # the unnamed orphan: what was found is adopted, the rest still needs a person
        names = ", ".join(f"{a.found.id} at {a.address}" for a in adopt if a.found is not None)
        return replace(finding, code=Code.ORPHAN_FOUND, detail=(
            f"{what}; {answered}. `--write` adopts {names}; the orphan stays listed until the rest is "
            "checked in the provider"), next_actions=(cmd.write(where), *finding.next_actions),
            alternatives=tuple(choices + forget_alternatives) or finding.alternatives, lookup=doc)
    if choices:
        return replace(finding, detail=(f"{what}; {answered}. Never adopted on a guess: choose the object that is "
                                         "the create's, or none"),
                       alternatives=tuple(choices + forget_alternatives), lookup=doc)
    return replace(finding, detail=f"{finding.detail}; {answered}", lookup=doc)
