"""Hostile module refs: refused (exit 2) or confined, one record per module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hybridops_tf.base.errors import UsageError
from hybridops_tf.record.address import module_id, resolve_module, validate_ref
from hybridops_tf.runtime.run_folder import RunFolder
from hybridops_tf.store.local import RecordStore
from tests.reliability.figures import FUZZ, note
from tests.reliability.strategies import PURE

ref_like = st.one_of(
    st.text(alphabet="ab_./-", max_size=12),
    st.text(max_size=12),
    st.lists(st.sampled_from(["a", "b", "_", "__", ".", "..", "...", "-", "a_", "_b", "x.y", ""]),
             max_size=4).map("/".join),
)
BASE = Path("/runtime-root")


@PURE
@given(ref_like)
@example("../x")
@example("/abs")
@example("a/../../b")
@example("a\x00b")
def test_accepted_ref_stays_one_folder_inside_the_runtime_root(ref: str) -> None:
    note(FUZZ, target="validate_ref confinement")
    try:
        validate_ref(ref)
    except UsageError as err:
        assert err.exit_code == 2
        return
    mid = module_id(ref)
    assert mid and "/" not in mid and "\x00" not in mid and mid not in (".", "..")
    store = RecordStore(BASE)
    for path in (store.record_path(ref).parent, RunFolder(BASE / "runs" / mid, "r").path):
        normal = Path(os.path.normpath(path))
        assert normal.parent in (BASE / "state" / "modules", BASE / "runs"), normal


@PURE
@given(ref_like, ref_like)
@example("a_/b", "a/_b")
def test_two_valid_refs_never_share_a_module_id(first: str, second: str) -> None:
    note(FUZZ, target="module_id is one-to-one")
    try:
        validate_ref(first)
        validate_ref(second)
    except UsageError:
        return
    if first != second:
        assert module_id(first) != module_id(second), (first, second)


@PURE
@given(st.lists(st.text(alphabet="abAB_.- \u00fc", min_size=1, max_size=6), min_size=1, max_size=3))
def test_derived_ref_of_any_module_folder_is_valid_or_refused(tmp_path_factory: pytest.TempPathFactory,
                                                              parts: list[str]) -> None:
    note(FUZZ, target="derived ref")
    root = tmp_path_factory.mktemp("modules-root")
    module = root.joinpath(*parts)
    try:
        module.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    (module / "main.tf").write_text("")
    try:
        target = resolve_module(module, None, root)
    except UsageError as err:
        assert err.exit_code == 2
        return
    assert validate_ref(target.ref) == target.ref


@PURE
@given(ref_like)
@example("sp ace")
@example("café/réseau")
@example("a__b/_c_/..")
def test_the_ref_offered_for_a_folder_name_it_refuses_is_one_it_takes(text: str) -> None:
    """A folder name hyops cannot make a ref of (a space, an `é`) is refused offering
    `--ref NAME`: that NAME must itself be a valid ref."""
    from hybridops_tf.record.address import suggest_ref

    assert validate_ref(suggest_ref(text)) == suggest_ref(text)
