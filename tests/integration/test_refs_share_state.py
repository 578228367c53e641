"""Two refs on one module directory and workspace keep one engine state, on the real engine.

Without the guard (operation/places.py), `apply --ref b` of a directory applied as ref a
replaced a's network by b's in the shared local state; a's record still said `ok` with the
deleted network's id, and reconcile's advice (`hyops apply --ref a`) would have replaced b's
in turn. A second ref there is now refused before anything runs, unless it keeps a
workspace of its own or the first ref's record claims nothing.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.integration.helpers import copy_module
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration


@pytest.fixture
def net(hyops: Hyops) -> str:
    """modules/net (the example network module), applied once as ref `a` named `alpha`."""
    copy_module("network", hyops.workdir / "modules" / "net")
    first = hyops("apply", "modules/net", "--ref", "a", "--var", "name=alpha")
    assert first.returncode == 0, first.stderr
    return "modules/net"


def _networks(hyops: Hyops) -> list[str]:
    return sorted(o["name"] for o in hyops.sim_objects() if o["type"] == "sim_network")


@pytest.mark.both_stores  # the check reads every record of the store in use
def test_a_second_ref_on_an_applied_directory_is_refused_and_the_first_record_stays_true(
    hyops: Hyops, net: str
) -> None:
    before = hyops.record("a")

    second = hyops("apply", net, "--ref", "b", "--var", "name=beta")

    assert second.returncode == 2, second.stderr
    assert "module a's" in second.stderr and "--ref a" in second.stderr and "nothing was run" in second.stderr
    assert hyops.record("b") is None
    assert hyops.record("a") == before
    assert _networks(hyops) == ["alpha"]  # the provider was never asked to replace it
    reconcile = hyops("reconcile", net, "--ref", "a")
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    asked = hyops("reconcile", net, "--ref", "b", "--json")  # the objects there are a's, not untracked
    [finding] = json.loads(asked.stdout)["modules"][0]["findings"]
    assert finding["code"] == "no_record" and "module a's" in finding["detail"]
    assert finding["next_actions"] == [f"hyops reconcile {net} --ref a"] and finding["alternatives"] == []
    plan = hyops("plan", net, "--ref", "b", "--detailed-exitcode")  # it would be a plan of a's state
    assert plan.returncode == 1 and "module a's" in plan.stderr, plan.stderr  # 2 means "changes" here
    settle = hyops("reconcile", net, "--ref", "b", "--write")  # it would settle b from a's objects
    assert settle.returncode == 2, settle.stdout + settle.stderr
    assert hyops.record("b") is None and hyops.record("a") == before


def test_a_destroy_under_another_ref_is_refused_and_destroys_nothing(hyops: Hyops, net: str) -> None:
    refused = hyops("destroy", net, "--ref", "c", "--auto-approve")

    assert refused.returncode == 2, refused.stderr
    assert "--ref a" in refused.stderr
    assert _networks(hyops) == ["alpha"]
    assert hyops.record("c") is None


def test_a_second_ref_in_a_workspace_of_its_own_keeps_its_own_state(hyops: Hyops, net: str) -> None:
    second = hyops("apply", net, "--ref", "b", "--workspace", "bee", "--var", "name=beta")

    assert second.returncode == 0, second.stderr
    assert _networks(hyops) == ["alpha", "beta"]
    assert hyops.record("a")["status"] == "ok"


def test_a_directory_whose_record_claims_nothing_may_be_applied_under_another_ref(hyops: Hyops, net: str) -> None:
    destroyed = hyops("destroy", net, "--ref", "a", "--auto-approve")
    assert destroyed.returncode == 0, destroyed.stderr

    second = hyops("apply", net, "--ref", "b", "--var", "name=beta")

    assert second.returncode == 0, second.stderr
    assert _networks(hyops) == ["beta"]
    again = hyops("apply", net, "--ref", "a")  # now a would share b's state
    assert again.returncode == 2, again.stderr
    assert "module b's" in again.stderr


def test_a_ref_whose_module_moved_into_another_refs_directory_is_refused(hyops: Hyops, net: str) -> None:
    copy_module("network", hyops.workdir / "modules" / "other")
    assert hyops("apply", "modules/other", "--ref", "b", "--var", "name=beta").returncode == 0

    moved = hyops("apply", net, "--ref", "b", "--var", "name=beta")  # b's configuration, now run in a's folder

    assert moved.returncode == 2, moved.stderr
    assert "module a's" in moved.stderr
    assert _networks(hyops) == ["alpha", "beta"]
    assert hyops.record("b")["module_dir"].endswith("other")


def test_a_ref_whose_folder_became_a_link_to_another_refs_directory_is_refused(hyops: Hyops, net: str) -> None:
    other = copy_module("network", hyops.workdir / "modules" / "other")
    assert hyops("apply", "modules/other", "--ref", "b", "--var", "name=beta").returncode == 0
    shutil.rmtree(other)  # its state file with it: that beta network lives on, unmanaged
    other.symlink_to("net")

    linked = hyops("apply", "modules/other", "--ref", "b", "--var", "name=beta")  # same path in b's record

    assert linked.returncode == 2, linked.stderr
    assert "module a's" in linked.stderr
    assert "alpha" in _networks(hyops)


def _share_as(hyops: Hyops, ref: str, like: str) -> None:
    """What a hyops before the guard left: `ref`'s record claiming `like`'s directory and state,
    and no place markers (cache/places/)."""
    shutil.rmtree(hyops.runtime_root / "cache" / "places")
    doc = json.loads(hyops.record_path(like).read_text())
    doc["module_ref"] = ref
    target = hyops.record_path(ref)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(doc))


def test_records_that_already_share_a_state_are_refused_reported_and_one_can_be_forgotten(
    hyops: Hyops, net: str
) -> None:
    _share_as(hyops, "b", like="a")

    for ref in ("a", "b"):
        refused = hyops("apply", net, "--ref", ref, "--var", "name=alpha")
        assert refused.returncode == 2, refused.stderr
    report = hyops("reconcile", "--all", "--json")
    assert report.returncode == 3, report.stderr
    modules = {m["module_ref"]: m for m in json.loads(report.stdout)["modules"]}
    for ref, other_ref in (("a", "b"), ("b", "a")):
        [finding] = modules[ref]["findings"]
        assert finding["code"] == "shared_state" and f"module {other_ref}'s" in finding["detail"]
        assert finding["next_actions"] == []
        assert [alt["command"] for alt in finding["alternatives"]] == [
            f"hyops reconcile {net} --ref {ref} --forget-record"]
    before = hyops.record("a")
    write = hyops("reconcile", net, "--ref", "a", "--write")
    assert write.returncode == 2, write.stdout + write.stderr
    assert hyops.record("a") == before

    forgot = hyops("reconcile", net, "--ref", "b", "--forget-record")

    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    assert hyops.record("b") is None
    assert hyops("reconcile", "--all").returncode == 0
    assert hyops("apply", net, "--ref", "a", "--var", "name=alpha").returncode == 0
    assert _networks(hyops) == ["alpha"]
    results = [json.loads(p.read_text()) for p in (hyops.runtime_root / "runs" / "b").glob("*/result.json")]
    [audit] = [r for r in results if r["outcome"] == "forgotten"]
    assert audit["record"]["module_ref"] == "b" and audit["shared_with"] == ["a"]


def test_forget_record_is_refused_for_a_record_whose_state_is_its_own(hyops: Hyops, net: str) -> None:
    refused = hyops("reconcile", net, "--ref", "a", "--forget-record")

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert hyops.record("a")["status"] == "ok"
