"""The engine half of the evidence `--write` read under the lock is reused for the report
exactly as a fresh read for the settled record would give it: a plan the new record does
not want is dropped, and only a plan it wants and the old one did not is asked for."""

from __future__ import annotations

from hybridops_tf.reconcile.evidence import EngineEvidence, _plan_wanted, _reusable
from hybridops_tf.record.lifecycle import Status
from tests.unit.reconcile_builders import quiet, record, state

READ = EngineEvidence(state("sim_network.this"), quiet(), quiet(), plan_unchecked=("plan failed",),
                      planned_attributes={"sim_network.this": {"name": "n"}}, plan_kind="attributes")


def test_an_error_record_settled_ok_reports_without_the_plan_it_no_longer_wants() -> None:
    kept = _reusable(READ, _plan_wanted(record(Status.OK)))

    assert kept is not None
    assert kept.plan is None and kept.planned_attributes is None and kept.plan_unchecked == ()
    assert kept.state == READ.state and kept.refresh == READ.refresh


def test_a_record_demoted_to_error_asks_for_the_plan_the_old_record_did_not_read() -> None:
    no_plan = EngineEvidence(state("sim_network.this"), quiet())

    assert _plan_wanted(record(Status.ERROR)) == "plain"
    assert _reusable(no_plan, "plain") is None


def test_a_saved_plan_with_attributes_serves_a_record_that_wants_the_plain_plan() -> None:
    kept = _reusable(READ, "plain")

    assert kept is not None and kept.plan == READ.plan and kept.planned_attributes is None


def test_nothing_more_is_asked_of_an_engine_that_could_not_plan() -> None:
    final = EngineEvidence(unchecked=("no engine found",), final=True)

    assert _reusable(final, "attributes") == final
