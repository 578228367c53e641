"""A lookup through the engine alone (`source: query`, docs/recovery.md: Lookups), on the real engine.

A create of the sim network loses its answer (a sim fault), so a suspect orphan is listed;
the lookups file beside the runtime root says `source: query` for sim_network, no command.
What is checked: on an engine with `terraform query` (Terraform >= 1.14: `make test` runs the
modern engine, 1.15.5; `HYOPS_MODERN_ENGINE=.engines/1.14.9/bin/terraform` the first that
has it), `reconcile --write` adopts the one object the engine listed and the next apply
converges with exactly one object in the sim cloud, the module's own folder untouched; two
candidates are never adopted; on an engine before 1.14 (the bundled 1.0.3) the finding says
the engine has no query, and nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.integration.helpers import (
    LOST_ORPHAN,
    a_twin_of_the_lost,
    findings,
    lose_the_network,
    reconcile,
    write_adopts_and_apply_converges,
)
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import engine_release

pytestmark = pytest.mark.integration

QUERY_MINIMUM = (1, 14)
ORPHAN = LOST_ORPHAN


@pytest.fixture
def query_hyops(modern_hyops: Hyops) -> Hyops:
    """`modern_hyops` on an engine with `terraform query` (Terraform >= 1.14); else skipped."""
    release = engine_release(modern_hyops.engine)
    if release is None or release < QUERY_MINIMUM:
        pytest.skip(f"`terraform query` needs Terraform >= {'.'.join(map(str, QUERY_MINIMUM))}; the modern "
                    f"engine found is {modern_hyops.engine} ({'.'.join(map(str, release or ())) or '?'})")
    return modern_hyops


def query_lookups(hyops: Hyops) -> None:
    """hyops.lookups.yml beside the runtime root: sim_network through the engine's query."""
    path = hyops.runtime_root.parent / "hyops.lookups.yml"
    path.write_text(yaml.safe_dump({"lookups": {"sim_network": {"source": "query", "match": ["name"],
                                                                "complete": True}}}))


def test_a_lost_create_is_adopted_through_the_engines_query_and_apply_converges_with_one_object(
    query_hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    hyops = query_hyops
    module = lose_the_network(hyops, module_copy, faults_file)
    query_lookups(hyops)
    [live] = hyops.sim_objects()
    files_before = sorted(p.name for p in module.iterdir())

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    found = findings(doc, "network")["orphan_found"]
    [ask] = found["lookup"]["asks"]
    assert ask["outcome"] == "found" and ask["candidates"] == [
        {"id": live["id"], "attributes": {"name": "demo-net", "cidr": "10.0.0.0/16"}, "identity": {"id": live["id"]}}]
    kept = hyops.runtime_root / "runs" / "network" / found["lookup"]["run_id"]
    assert 'list "sim_network" "hyops"' in (kept / "lookup.1.tfquery.hcl").read_text()
    assert not (kept / "lookup.1.module").exists()  # the scratch folder is gone
    assert sorted(p.name for p in module.iterdir()) == files_before  # nothing written into the module

    write_adopts_and_apply_converges(hyops, faults_file, live["id"])


def test_two_objects_the_engine_lists_are_never_adopted_and_both_are_named(
    query_hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    hyops = query_hyops
    lose_the_network(hyops, module_copy, faults_file)
    lost, twin = a_twin_of_the_lost(hyops)
    query_lookups(hyops)
    before = hyops.record("network")

    code, doc = reconcile(hyops, "modules/network")
    written = hyops("reconcile", "modules/network", "--write")

    assert code == 3
    orphan = findings(doc, "network")["suspect_orphan"]
    assert orphan["lookup"]["asks"][0]["outcome"] == "several"
    assert sorted(c["id"] for c in orphan["lookup"]["asks"][0]["candidates"]) == sorted([lost, twin])
    assert sorted(a["command"] for a in orphan["alternatives"] if "--import" in a["command"]) == sorted(
        f"hyops reconcile modules/network --ref network --import {ORPHAN}={i}" for i in (lost, twin))
    assert written.returncode == 3, written.stdout + written.stderr
    after = hyops.record("network")
    assert after["suspect_orphans"] == before["suspect_orphans"]
    assert "id" not in after.get("resources", {}).get(ORPHAN, {})  # nothing adopted
    assert not [c for c in hyops.sim_calls() if c["op"] == "import"] and len(hyops.sim_objects()) == 2


def test_an_engine_before_1_14_says_it_has_no_query_and_nothing_changes(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    release = engine_release(hyops.engine)
    if release is None or release >= QUERY_MINIMUM:
        pytest.skip(f"this leg's engine ({hyops.engine}) has `terraform query`: the modern tests cover it")
    lose_the_network(hyops, module_copy, faults_file)
    query_lookups(hyops)
    before = hyops.record("network")
    objects = hyops.sim_objects()

    code, doc = reconcile(hyops, "modules/network")
    written = hyops("reconcile", "modules/network", "--write")

    assert code == 3
    orphan = findings(doc, "network")["suspect_orphan"]
    [ask] = orphan["lookup"]["asks"]
    assert ask["outcome"] == "unsupported" and "has no `terraform query`" in ask["why"]
    assert ask["candidates"] == []
    assert written.returncode == 3, written.stdout + written.stderr
    assert hyops.record("network")["suspect_orphans"] == before["suspect_orphans"]
    assert hyops.sim_objects() == objects
