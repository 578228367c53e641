"""From a lookup's candidates to a verdict per suspect orphan: pure (no I/O, no clock).

The one rule: never adopt on a guess. A candidate is dropped when any known state or record
holds its id (it is some other address's object, or a released one), and when one of the
lookup's `match` attributes differs from the value the create was planned with. Then:
- exactly one left, and every `match` attribute had a planned value: FOUND (`--write`
  imports it at the orphan's address);
- none left and the lookup is `complete`: NONE (the create made nothing; `--write` drops the
  orphan);
- none left from a lookup that is not complete: NOT_FOUND (nothing proven: today's advice);
- none left, but a dropped one matched every planned `match` attribute: CONTRADICTED (the
  lookup answers with an object shaped as the create planned it while a known state or record
  holds its id: the lookup and the states disagree, so nothing is concluded, never "the create
  made nothing"; the finding names the candidate and who holds it, for a person);
- one or more left while a `match` attribute had no planned value (unknown at plan time, or
  sensitive): UNMATCHED; two or more: SEVERAL; one that is also another orphan's only or
  listed candidate: SHARED. None of these is ever adopted: each candidate is named, with
  its exact `--import`, for a person to choose.
- the command failed, hung or printed garbage: FAILED (today's advice, and why).
- the source cannot list the type at all (`source: query` on an engine before Terraform 1.14,
  or a provider with no list resource for it): UNSUPPORTED, as FAILED, saying exactly that.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from typing import Any

from hybridops_tf.reconcile.verdict import Candidate, Judgement, OrphanLookup, Outcome

UNNAMED = "*"  # record/objects.py's UNNAMED_ORPHAN: the orphan no plan could name


def resource_type(address: str) -> str | None:
    """`module.a["k"].sim_vm.this[0]` -> `sim_vm`; None for a data source or no address."""
    parts: list[str] = []
    depth, quoted, word = 0, False, ""
    for ch in address:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "[":
            depth += 1
        elif not quoted and ch == "]":
            depth -= 1
        elif ch == "." and depth == 0 and not quoted:
            parts.append(word)
            word = ""
            continue
        if depth == 0 and not quoted and ch not in '[]"':
            word += ch
    parts.append(word)
    while len(parts) >= 2 and parts[0] == "module":
        parts = parts[2:]
    if len(parts) != 2 or not parts[0] or parts[0] == "data":
        return None
    return parts[0]


def judge(address: str, type_name: str, source: str, *, match: Collection[str], complete: bool,
          planned: Mapping[str, Any], candidates: Iterable[Candidate], held: Collection[str],
          in_state: bool = False) -> Judgement:
    """The verdict of one answered lookup (see the module docstring). `held`: the ids known
    states and records hold; a mapping names who holds each (consult.held_ids)."""
    kept: list[Candidate] = []
    dropped_held: list[str] = []
    dropped_differ: list[str] = []
    contradicted: list[tuple[str, str]] = []
    for candidate in candidates:
        differs = any(m in planned and candidate.attributes.get(m, _MISSING) != planned[m] for m in match)
        if candidate.id in held:
            dropped_held.append(candidate.id)
            if match and all(m in planned for m in match) and not differs:  # shaped as the create planned it
                holder = held.get(candidate.id) if isinstance(held, Mapping) else None
                contradicted.append((candidate.id, str(holder or "a known state or record")))
        elif differs:
            dropped_differ.append(candidate.id)
        else:
            kept.append(candidate)
    unplanned = tuple(m for m in match if m not in planned)
    if not kept and contradicted:
        return Judgement(address, type_name, Outcome.CONTRADICTED, source, complete, tuple(match), (),
                         tuple(dropped_held), tuple(dropped_differ), unplanned, in_state=in_state,
                         contradicted=tuple(contradicted))
    if not kept:
        outcome = Outcome.NONE if complete else Outcome.NOT_FOUND
    elif unplanned:
        outcome = Outcome.UNMATCHED
    elif len(kept) == 1:
        outcome = Outcome.FOUND
    else:
        outcome = Outcome.SEVERAL
    return Judgement(address, type_name, outcome, source, complete, tuple(match), tuple(kept), tuple(dropped_held),
                     tuple(dropped_differ), unplanned, in_state=in_state)


def failed(address: str, type_name: str, source: str, why: str, *, complete: bool = False,
           in_state: bool = False, unsupported: bool = False) -> Judgement:
    outcome = Outcome.UNSUPPORTED if unsupported else Outcome.FAILED
    return Judgement(address, type_name, outcome, source, complete, why=why, in_state=in_state)


def disambiguate(lookups: Mapping[str, OrphanLookup]) -> dict[str, OrphanLookup]:
    """A found object that is also a candidate kept for another address (two orphans of one
    type whose lookups cannot tell them apart) is nobody's for sure: SHARED, never adopted."""
    owners: dict[str, list[str]] = {}
    for lookup in lookups.values():
        for ask in lookup.asks:
            for candidate in ask.kept:
                owners.setdefault(candidate.id, []).append(ask.address)
    out: dict[str, OrphanLookup] = {}
    for orphan, lookup in lookups.items():
        asks = []
        for ask in lookup.asks:
            found = ask.found
            others = [a for a in owners.get(found.id, []) if a != ask.address] if found is not None else []
            asks.append(replace(ask, outcome=Outcome.SHARED, also_for=tuple(dict.fromkeys(others)))
                        if others else ask)
        out[orphan] = replace(lookup, asks=tuple(asks))
    return out


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()
