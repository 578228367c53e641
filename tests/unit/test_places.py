"""Which records keep the same engine state as a ref about to run (operation/places.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from hybridops_tf.base.errors import UsageError
from hybridops_tf.operation.places import (
    Place,
    claimants,
    claims,
    refuse_shared_state,
    standing,
    starts_from_nothing,
)
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord


def _record(ref: str, directory: Path | None, status: Status = Status.OK,
            workspace: str | None = None) -> OperationRecord:
    return OperationRecord(module_ref=ref, status=status, run_id=f"apply-{ref}",
                           module_dir=str(directory) if directory else None, workspace=workspace)


def test_another_ref_on_the_same_directory_and_workspace_claims_the_place(tmp_path: Path) -> None:
    place = Place.of(tmp_path, None)
    other = _record("a", tmp_path)

    assert claimants(place, "b", [other]) == [other]


def test_the_default_workspace_is_one_place_however_it_is_written(tmp_path: Path) -> None:
    assert Place.of(tmp_path, None) == Place.of(tmp_path, "default")
    assert claimants(Place.of(tmp_path, "default"), "b", [_record("a", tmp_path)])


def test_a_symlinked_path_to_the_directory_is_the_same_place(tmp_path: Path) -> None:
    real = tmp_path / "modules" / "net"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)

    assert claimants(Place.of(tmp_path / "link", None), "b", [_record("a", real)])


def test_its_own_record_another_workspace_or_directory_and_empty_claims_are_no_claimants(tmp_path: Path) -> None:
    place = Place.of(tmp_path, None)
    records = [
        _record("b", tmp_path),  # the ref itself
        _record("a", tmp_path, workspace="staging"),
        _record("c", tmp_path / "elsewhere"),
        _record("d", tmp_path, Status.DESTROYED),
        _record("e", tmp_path, Status.ABSENT),
        _record("f", None),  # a record that never named its directory
    ]

    assert claimants(place, "b", records) == []


def test_running_error_and_retained_records_still_claim(tmp_path: Path) -> None:
    place = Place.of(tmp_path, None)
    records = [_record(ref, tmp_path, status) for ref, status in
               (("r", Status.RUNNING), ("e", Status.ERROR), ("k", Status.RETAINED))]

    assert [r.module_ref for r in claimants(place, "b", records)] == ["r", "e", "k"]


def test_a_ref_claims_nothing_yet_without_a_record_or_with_one_that_claims_nothing() -> None:
    assert starts_from_nothing(None)
    assert starts_from_nothing(_record("a", None, Status.DESTROYED))
    assert starts_from_nothing(_record("a", None, Status.ABSENT))
    assert not starts_from_nothing(_record("a", None, Status.OK))
    assert not starts_from_nothing(_record("a", None, Status.ERROR))


def test_records_that_claim_one_place_each_name_the_others(tmp_path: Path) -> None:
    other = tmp_path / "other"
    records = [_record("a", tmp_path), _record("b", tmp_path), _record("c", tmp_path / ".", workspace="default"),
               _record("d", other), _record("e", tmp_path, Status.DESTROYED), _record("f", tmp_path, workspace="w")]

    here = claims(records)
    place = Place.of(tmp_path, None)
    assert {ref: standing(here, place, ref)[1] for ref in "abc"} == {"a": ("b", "c"), "b": ("a", "c"), "c": ("a", "b")}
    assert standing(here, Place.of(other, None), "d") == (True, ())  # alone where it is
    assert standing(here, place, "e") == (False, ("a", "b", "c"))  # claims nothing: the place is theirs


class _Store:
    """A local store's surface the check uses, counting record reads."""

    spans_roots = False

    def __init__(self, records: list[OperationRecord]) -> None:
        self.records = {r.module_ref: r for r in records}
        self.reads = 0

    def keys(self) -> list[str]:
        return list(self.records)

    def read(self, key: str) -> OperationRecord | None:
        self.reads += 1
        return self.records.get(key)


def _check(directory: Path, ref: str, previous: OperationRecord | None, store: _Store, root: Path) -> None:
    refuse_shared_state("apply", ModuleTarget(directory, ref), None, lambda: previous, cast(Any, store), root)


def test_a_ref_that_passed_the_check_skips_the_scan_and_any_other_ref_scans(tmp_path: Path) -> None:
    module, root = tmp_path / "net", tmp_path / "root"
    module.mkdir()
    store = _Store([_record("c", tmp_path / "elsewhere")])

    _check(module, "a", None, store, root)  # no marker yet: a scan
    assert store.reads == 1
    store.records["a"] = _record("a", module)
    _check(module, "a", store.records["a"], store, root)
    assert store.reads == 1  # the place's marker names a

    with pytest.raises(UsageError, match="module a's"):
        _check(module, "b", None, store, root)
    assert store.reads > 1


def test_without_a_marker_the_scan_finds_records_that_already_share_the_place(tmp_path: Path) -> None:
    module, root = tmp_path / "net", tmp_path / "root"
    module.mkdir()
    store = _Store([_record("a", module), _record("b", module)])  # left by a hyops before the check

    with pytest.raises(UsageError, match="module b's"):
        _check(module, "a", store.records["a"], store, root)


def test_each_place_lists_the_refs_that_claim_it(tmp_path: Path) -> None:
    records = [_record("b", tmp_path), _record("a", tmp_path), _record("c", tmp_path, Status.DESTROYED),
               _record("d", tmp_path, workspace="w")]

    assert claims(records) == {Place.of(tmp_path, None): ("a", "b"), Place.of(tmp_path, "w"): ("d",)}
