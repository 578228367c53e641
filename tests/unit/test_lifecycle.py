"""lifecycle.py: statuses, the destroy step, staleness and the apply guard (docs/contract.md: Statuses)."""

from __future__ import annotations

import pytest

from hybridops_tf.record.lifecycle import (
    CLAIMS_EMPTY,
    DestroyStep,
    MemberStatus,
    ResourceStatus,
    Status,
    apply_refusal,
    destroy_step,
    is_stale,
)

D, K, R = DestroyStep.DESTROY, DestroyStep.SKIP, DestroyStep.RETAIN
# (status, include_retained) -> step, for a member not declared retain_on_destroy. Skip only
# destroyed and absent; retained on request.
STEPS = {
    (Status.RUNNING, False): D,
    (Status.RUNNING, True): D,
    (Status.OK, False): D,
    (Status.OK, True): D,
    (Status.ERROR, False): D,
    (Status.ERROR, True): D,
    (Status.DESTROYED, False): K,
    (Status.DESTROYED, True): K,
    (Status.ABSENT, False): K,
    (Status.ABSENT, True): K,
    (Status.RETAINED, False): R,
    (Status.RETAINED, True): D,
    (None, False): D,  # no record: nothing proves the module is empty
    (None, True): D,
}


def test_the_destroy_table_covers_every_status() -> None:
    assert {s for s, _ in STEPS} == {*Status, None}


@pytest.mark.parametrize(("status", "include_retained"), sorted(STEPS, key=str))
def test_destroy_step_of_each_status(status: Status | None, include_retained: bool) -> None:
    assert destroy_step(status, include_retained=include_retained) is STEPS[(status, include_retained)]


@pytest.mark.parametrize("status", [*Status, None], ids=str)
def test_a_member_declared_retain_on_destroy_is_kept_unless_retained_ones_are_included(
        status: Status | None) -> None:
    kept = destroy_step(status, retain_on_destroy=True)
    included = destroy_step(status, retain_on_destroy=True, include_retained=True)
    if status in CLAIMS_EMPTY:
        assert kept is included is K  # nothing left to keep
    else:
        assert (kept, included) == (R, D)


def test_destroy_step_defaults_to_keeping_retained() -> None:
    assert destroy_step(Status.RETAINED) is R


def test_only_destroyed_and_absent_claim_the_module_is_empty() -> None:
    assert {Status.DESTROYED, Status.ABSENT} == CLAIMS_EMPTY


def test_status_words_match_the_contract() -> None:
    assert [s.value for s in Status] == [
        "running",
        "ok",
        "error",
        "destroyed",
        "absent",
        "retained",
    ]
    assert {s.value for s in ResourceStatus} == {"complete", "error", "pending", "destroyed"}
    assert {s.value for s in MemberStatus} == {
        "ok",
        "error",
        "interrupted",
        "pending",
        "cancelled",  # a queued run withdrawn before a worker took the member
        "destroyed",
        "absent",
        "retained",
        "skipped",
        "running",  # only in the report of a run in progress
    }
    assert "pending" not in {s.value for s in Status}, (
        "pending is never written into a module record"
    )


# (status, lock_free) -> stale: only a running record that no live process holds the lock of.
STALE = {
    (Status.RUNNING, True): True,
    (Status.RUNNING, False): False,  # a live run holds the lock: in progress, not stale
    (Status.OK, True): False,
    (Status.OK, False): False,
    (Status.ERROR, True): False,
    (Status.ERROR, False): False,
    (Status.DESTROYED, True): False,
    (Status.DESTROYED, False): False,
    (Status.ABSENT, True): False,
    (Status.ABSENT, False): False,
    (Status.RETAINED, True): False,
    (Status.RETAINED, False): False,
}


def test_the_stale_table_covers_every_status_and_lock_state() -> None:
    assert set(STALE) == {(status, free) for status in Status for free in (True, False)}


@pytest.mark.parametrize(("status", "lock_free"), list(STALE))
def test_only_a_running_record_with_a_free_lock_is_stale(status: Status, lock_free: bool) -> None:
    assert is_stale(status, lock_free) is STALE[(status, lock_free)]


@pytest.mark.parametrize(
    ("status", "stale", "orphans", "allow", "refused"),
    [
        (None, False, 0, False, False),
        (Status.OK, False, 0, False, False),
        (Status.ERROR, False, 0, False, False),  # a plain failure may be re-applied
        (Status.DESTROYED, False, 0, False, False),
        (Status.ABSENT, False, 0, False, False),
        (Status.RETAINED, False, 0, False, False),
        (Status.RUNNING, True, 0, False, True),  # stale running: outcome uncertain
        (Status.RUNNING, False, 0, False, False),  # live holder: the lock decides, not this guard
        (Status.ERROR, False, 1, False, True),  # suspect orphans recorded
        (Status.OK, False, 3, False, True),
        (Status.RUNNING, True, 2, False, True),
        (Status.RUNNING, True, 2, True, False),  # --allow-uncertain
        (Status.ERROR, False, 1, True, False),
    ],
)
def test_apply_refusal(
    status: Status | None, stale: bool, orphans: int, allow: bool, refused: bool
) -> None:
    why = apply_refusal(status, stale=stale, suspect_orphans=orphans, allow_uncertain=allow)

    assert (why is not None) is refused
    if why is not None:
        assert why.strip()


def test_apply_refusal_explains_each_reason() -> None:
    stale = apply_refusal(Status.RUNNING, stale=True, suspect_orphans=0, allow_uncertain=False)
    orphans = apply_refusal(Status.ERROR, stale=False, suspect_orphans=2, allow_uncertain=False)

    assert stale is not None and "stale" in stale
    assert orphans is not None and "2 suspect orphan" in orphans
