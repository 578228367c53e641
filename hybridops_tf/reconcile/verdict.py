"""What the lookups said about suspect orphans, as data: a candidate object, the outcome of one
lookup for one address (Judgement) and every lookup asked about one orphan (OrphanLookup).

Pure values, below both the lookups (reconcile/lookup/, which ask and judge) and the evidence
that carries their answers (reconcile/model.py): the judging rules are lookup/judge.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


@dataclass(frozen=True)
class Candidate:
    """One object the provider has that could be the orphan's."""

    id: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    identity: Mapping[str, Any] | None = None  # the provider's identity, when the engine listed it (query)

    def to_dict(self) -> dict[str, Any]:
        doc = {"id": self.id, "attributes": dict(self.attributes)}
        return doc if self.identity is None else {**doc, "identity": dict(self.identity)}


class Outcome(StrEnum):
    FOUND = "found"
    NONE = "none"
    NOT_FOUND = "not_found"
    UNMATCHED = "unmatched"
    SEVERAL = "several"
    SHARED = "shared"
    CONTRADICTED = "contradicted"
    FAILED = "failed"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Judgement:
    """What one lookup said about one address, and what is left of its candidates."""

    address: str  # where the object would be adopted
    type: str
    outcome: Outcome
    source: str  # the lookup, as a person recognises it (command, file, type)
    complete: bool = False
    match: tuple[str, ...] = ()
    kept: tuple[Candidate, ...] = ()
    held: tuple[str, ...] = ()  # ids dropped: a known state or record holds them
    differ: tuple[str, ...] = ()  # ids dropped: a `match` attribute differs from the planned value
    unplanned: tuple[str, ...] = ()  # `match` attributes the plan gave no value (unknown or sensitive)
    why: str = ""  # FAILED: what went wrong
    in_state: bool = False  # the address holds another object in state: a found one is a second object
    also_for: tuple[str, ...] = ()  # SHARED: the other addresses whose candidate it is
    # CONTRADICTED: (id, who holds it) of each dropped candidate that matched the plan
    contradicted: tuple[tuple[str, str], ...] = ()

    @property
    def found(self) -> Candidate | None:
        return self.kept[0] if self.outcome is Outcome.FOUND else None

    @property
    def adoptable(self) -> bool:
        """`--write` imports it: one candidate, at an address the state does not hold."""
        return self.outcome is Outcome.FOUND and not self.in_state

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"address": self.address, "type": self.type, "outcome": self.outcome.value,
                               "lookup": self.source, "complete": self.complete, "match": list(self.match),
                               "candidates": [c.to_dict() for c in self.kept]}
        if self.contradicted:
            doc["contradicted"] = [{"id": ident, "held_by": holder} for ident, holder in self.contradicted]
        for name in ("held", "differ", "unplanned", "also_for"):
            if getattr(self, name):
                doc[{"held": "dropped_held", "differ": "dropped_differ"}.get(name, name)] = list(getattr(self, name))
        if self.why:
            doc["why"] = self.why
        if self.in_state:
            doc["in_state"] = True
        return doc


@dataclass(frozen=True)
class OrphanLookup:
    """Every lookup asked about one suspect orphan: one for a named orphan, one per planned
    create for the unnamed `*`; `not_asked` says why some or all could not be asked."""

    orphan: str
    asks: tuple[Judgement, ...] = ()
    not_asked: str = ""
    run_id: str | None = None  # the reconcile run folder that keeps what was asked and answered

    @property
    def adoptable(self) -> tuple[Judgement, ...]:
        return tuple(a for a in self.asks if a.adoptable)

    @property
    def settled(self) -> bool:
        """Every object the orphan's create may have made is accounted for: adopted (found) or
        proven never made (none, from a complete lookup). Then the orphan can go."""
        return (bool(self.asks) and not self.not_asked
                and all(a.adoptable or a.outcome is Outcome.NONE for a in self.asks))

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"orphan": self.orphan, "settled": self.settled,
                               "asks": [a.to_dict() for a in self.asks]}
        if self.not_asked:
            doc["not_asked"] = self.not_asked
        if self.run_id:
            doc["run_id"] = self.run_id
        return doc
