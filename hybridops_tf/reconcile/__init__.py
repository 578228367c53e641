"""`hyops reconcile`: compare operation records with provider state, settle from evidence.

- model.py      Code, Finding, ModuleEvidence, PlanEvidence, Commands, Report (types only)
- compare.py    compare(evidence) -> findings: pure and linear
- rules.py      what `--write` may conclude (pure): never ok/destroyed/absent without evidence
- evidence.py   gathers one module's evidence (record, lock, events, state, both plans)
- targets.py    MODULE_DIR, `--all` (every record), `--stack FILE` (every member)
- write.py      `--write` under the module lock, with an audit run folder
- orphans.py    `--forget-orphan ADDRESS`, `--import ADDRESS=ID`
- service.py    reconcile(ReconcileRequest) -> Report, the one call the CLI makes
"""

from __future__ import annotations

from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import (
    Code,
    Finding,
    ModuleEvidence,
    PlanEvidence,
    Report,
)
from hybridops_tf.record.advice import Commands

__all__ = ["Code", "Commands", "Finding", "ModuleEvidence", "PlanEvidence", "Report", "compare"]
