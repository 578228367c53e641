"""Workspaces are part of a record's identity (issue 11, item 2), on the real engine."""

from __future__ import annotations

import json

import pytest

from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration


def test_two_workspaces_of_one_module_keep_two_records(hyops: Hyops, module_copy) -> None:
    """Sequence: `hyops apply mod` in the default workspace, then `TF_WORKSPACE=stg hyops
    apply mod --var name=stg-net`. The second run overwrote the default workspace's record
    with stg's outputs; reconcile then reported outputs_mismatch."""
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    default = hyops.record("network")

    stg = hyops("apply", "modules/network", "--var", "name=stg-net", env={"TF_WORKSPACE": "stg"})

    assert stg.returncode == 0, stg.stderr
    assert hyops.record("network") == default  # the default workspace's record, untouched
    stg_path = hyops.runtime_root / "state" / "modules" / "network@stg" / "latest.json"
    stg_record = json.loads(stg_path.read_text())
    assert (stg_record["module_ref"], stg_record["workspace"], stg_record["status"]) == ("network", "stg", "ok")
    assert stg_record["outputs"]["network_id"] != default["outputs"]["network_id"]
    assert sorted(o["name"] for o in hyops.sim_objects()) == ["demo-net", "stg-net"]

    # the same workspace by option; status and reconcile see each record apart
    by_option = hyops("status", "modules/network", "--workspace", "stg", "--json")
    assert by_option.returncode == 0, by_option.stderr
    assert json.loads(by_option.stdout)["workspace"] == "stg"
    for env in ({}, {"TF_WORKSPACE": "stg"}):
        check = hyops("reconcile", "modules/network", "--json", env=env)
        assert check.returncode == 0, check.stdout + check.stderr
        assert json.loads(check.stdout)["consistent"] is True
    listing = hyops("status", "--all", "--json")
    assert sorted((r["module_ref"], r.get("workspace", "")) for r in json.loads(listing.stdout)) == [
        ("network", ""), ("network", "stg")]


def test_destroy_in_one_workspace_leaves_the_other(hyops: Hyops, module_copy) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    assert hyops("apply", "modules/network", "--workspace", "stg", "--var", "name=stg-net").returncode == 0

    gone = hyops("destroy", "modules/network", "--workspace", "stg")

    assert gone.returncode == 0, gone.stderr
    assert hyops.record("network")["status"] == "ok"
    assert [o["name"] for o in hyops.sim_objects()] == ["demo-net"]


def test_a_bad_workspace_name_is_exit_2(hyops: Hyops, module_copy) -> None:
    module_copy("network")
    result = hyops("apply", "modules/network", "--workspace", "../x")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert hyops.record("network") is None


def test_reconcile_all_names_each_record_s_workspace_and_its_commands_pass_it(hyops: Hyops, module_copy) -> None:
    """`reconcile --all` listed both records of a module as `network`, and the commands it
    advised for the stg one acted on the default workspace."""
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    assert hyops("apply", "modules/network", "--workspace", "stg", "--var", "name=stg-net").returncode == 0
    [stg_net] = [o["id"] for o in hyops.sim_objects() if o["name"] == "stg-net"]
    assert hyops("sim", "rm", stg_net).returncode == 0  # stg drifts: its network vanished

    text = hyops("reconcile", "--all")
    doc = hyops("reconcile", "--all", "--json")

    assert text.returncode == doc.returncode == 3, text.stdout + text.stderr
    heads = [line for line in text.stdout.splitlines() if ": record " in line]
    assert len(heads) == 2 and sum("workspace stg" in line for line in heads) == 1, heads
    modules = json.loads(doc.stdout)["modules"]
    assert [(m["module_ref"], m.get("workspace")) for m in modules] == [("network", None), ("network", "stg")]
    advised = [c for f in modules[1]["findings"]
               for c in [*f["next_actions"], *(a["command"] for a in f["alternatives"])] if c.startswith("hyops ")]
    assert advised and all("--workspace stg" in c for c in advised), advised
