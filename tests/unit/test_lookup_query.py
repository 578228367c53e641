"""The query source of a lookup (reconcile/lookup/query.py): the `.tfquery.hcl` it writes, the
`query -json` stream turned into candidates (pure), which engines have `terraform query`
(engine/features.py), and the sim's list resources answering it (sim/listing.py, servicer.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.engine import commands, features
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.runner import VAR_FILE_ARG, Engine
from hybridops_tf.reconcile.lookup import query
from hybridops_tf.reconcile.lookup.protocol import MAX_CANDIDATES
from hybridops_tf.reconcile.lookup.query import QueryError, parse_stream
from hybridops_tf.reconcile.verdict import Candidate
from hybridops_tf.sim import wire
from hybridops_tf.sim.cloud import SimCloud
from hybridops_tf.sim.lifecycle import PluginLifecycle
from hybridops_tf.sim.provider import SimProvider
from hybridops_tf.sim.servicer import SimServicer
from hybridops_tf.sim.store import SimStore

ADDRESS = "list.sim_network.hyops"


def _line(kind: str, body: dict[str, Any]) -> str:
    return json.dumps({"@level": "info", "@message": "...", "type": kind, kind: body})


def _found(ident: str, name: str = "demo-net", *, address: str = ADDRESS, resource: bool = True) -> str:
    body: dict[str, Any] = {"address": address, "display_name": f"{name} ({ident})", "identity": {"id": ident},
                            "identity_version": 0, "resource_type": "sim_network"}
    if resource:
        body["resource_object"] = {"id": ident, "name": name, "cidr": "10.0.0.0/16"}
    return _line("list_resource_found", body)


def _stream(*lines: str, complete: bool = True) -> str:
    head = [json.dumps({"type": "version", "terraform": "1.15.5"}),
            _line("list_start", {"address": ADDRESS, "resource_type": "sim_network"})]
    tail = [_line("list_complete", {"address": ADDRESS, "resource_type": "sim_network", "total": len(lines)})]
    return "\n".join(head + list(lines) + (tail if complete else [])) + "\n"


def test_each_object_found_is_a_candidate_with_its_id_attributes_and_identity() -> None:
    candidates = parse_stream(_stream(_found("net-1"), _found("net-2", "other")), "sim_network")

    assert candidates == (
        Candidate("net-1", {"name": "demo-net", "cidr": "10.0.0.0/16"}, {"id": "net-1"}),
        Candidate("net-2", {"name": "other", "cidr": "10.0.0.0/16"}, {"id": "net-2"}))
    assert candidates[0].to_dict()["identity"] == {"id": "net-1"}


def test_without_the_object_the_identitys_one_value_is_the_id() -> None:
    assert parse_stream(_stream(_found("net-1", resource=False)), "sim_network") == (
        Candidate("net-1", {}, {"id": "net-1"}),)


def test_an_empty_listing_that_completed_is_no_candidates() -> None:
    assert parse_stream(_stream(), "sim_network") == ()


def test_results_of_another_list_block_are_not_candidates() -> None:
    assert parse_stream(_stream(_found("net-9", address="list.sim_network.mine")), "sim_network") == ()


def test_a_listing_that_never_completed_proves_nothing() -> None:
    with pytest.raises(QueryError, match="never said the listing") as info:
        parse_stream(_stream(_found("net-1"), complete=False), "sim_network")
    assert not info.value.unsupported


def test_a_provider_without_the_list_resource_is_unsupported_saying_so() -> None:
    diagnostic = _line("diagnostic", {"severity": "error", "summary": "Invalid list resource",
                                      "detail": 'The provider x does not support list resource "sim_network".'})

    with pytest.raises(QueryError, match="no list resource for type sim_network") as info:
        parse_stream("\n".join([json.dumps({"type": "version"}), diagnostic]), "sim_network")

    assert info.value.unsupported


def test_an_engine_error_fails_the_lookup_in_the_engines_words() -> None:
    diagnostic = _line("diagnostic", {"severity": "error", "summary": "Failed to query", "detail": "403"})

    with pytest.raises(QueryError, match="Failed to query: 403") as info:
        parse_stream(_stream(diagnostic), "sim_network")

    assert not info.value.unsupported


def test_an_object_with_no_id_and_no_one_value_identity_fails_the_lookup() -> None:
    line = _line("list_resource_found", {"address": ADDRESS, "display_name": "x",
                                         "identity": {"project": "p", "role": "r"}})
    with pytest.raises(QueryError, match="cannot be named for an import"):
        parse_stream(_stream(line), "sim_network")


def test_more_objects_than_an_answer_may_hold_fail_the_lookup() -> None:
    lines = [_found(f"net-{i}") for i in range(MAX_CANDIDATES + 1)]
    with pytest.raises(QueryError, match="more than"):
        parse_stream(_stream(*lines), "sim_network")


def test_the_list_block_names_the_types_implied_provider_and_asks_for_the_objects() -> None:
    text = query.list_block("sim_vm")

    assert text.startswith('list "sim_vm" "hyops" {')
    assert "provider         = sim\n" in text and "include_resource = true\n" in text
    assert f"limit            = {MAX_CANDIDATES + 1}\n" in text


@pytest.mark.parametrize("version,kind,has", [
    ("1.0.3", "terraform", False), ("1.13.5", "terraform", False), ("1.14.0", "terraform", True),
    ("1.15.5", "terraform", True), ("1.11.0", "tofu", False)])
def test_terraform_query_is_there_from_1_14_and_never_on_opentofu(version: str, kind: str, has: bool) -> None:
    info = EngineInfo(Path("/bin/x"), version, kind)

    assert features.QUERY(info) is has
    assert (query.unsupported_engine(info) is None) is has


def test_query_gets_the_inputs_on_stdin_as_a_plan_does() -> None:
    engine = Engine(EngineInfo(Path("/bin/terraform"), "1.14.9", "terraform"), Path("/m"), inputs='a = "b"\n')

    assert engine.argv(commands.query) == ["/bin/terraform", "-chdir=/m", "query", VAR_FILE_ARG, "-json",
                                           "-no-color"]


def test_the_data_folder_is_the_modules_unless_the_environment_names_one(tmp_path: Path) -> None:
    assert query.data_dir(tmp_path, {}) == tmp_path.absolute() / ".terraform"
    assert query.data_dir(tmp_path, {"TF_DATA_DIR": "data"}) == tmp_path.absolute() / "data"
    assert query.data_dir(tmp_path, {"TF_DATA_DIR": "/abs/data"}) == Path("/abs/data")


# ----- the sim's list resources --------------------------------------------------------------


class _Provider(SimProvider):
    def __init__(self, cloud: SimCloud) -> None:
        super().__init__(PluginLifecycle())
        self._cloud = cloud


def _list(servicer: SimServicer, type_name: str, config: dict[str, Any] | None = None,
          include: bool = True, limit: int = 0) -> list[Any]:
    request = wire.pb().ListResource.Request(type_name=type_name, config=wire.encode(config or {}),
                                             include_resource_object=include, limit=limit)
    return list(servicer.ListResource(request, None))


def test_the_sim_lists_each_object_of_a_type_with_its_identity_and_state(tmp_path: Path) -> None:
    store = SimStore(tmp_path)
    net = store.create("sim_network", "demo-net", {"cidr": "10.0.0.0/16"})
    other = store.create("sim_network", "other", {"cidr": "10.1.0.0/16"})
    store.create("sim_vm", "vm", {"network_id": net.id, "size": "small", "ip": "10.0.0.5"})
    servicer = SimServicer(_Provider(SimCloud(store)), PluginLifecycle())

    events = _list(servicer, "sim_network")
    named = _list(servicer, "sim_network", {"name": "other"}, include=False)

    assert [wire.decode(e.identity.identity_data) for e in events] == [{"id": net.id}, {"id": other.id}]
    assert wire.decode(events[0].resource_object) == {"id": net.id, "name": "demo-net", "cidr": "10.0.0.0/16"}
    assert events[0].display_name == f"demo-net ({net.id})"
    assert [wire.decode(e.identity.identity_data) for e in named] == [{"id": other.id}]
    assert not named[0].HasField("resource_object")
    assert len(_list(servicer, "sim_network", limit=1)) == 1


def test_the_sim_declares_a_list_resource_for_each_type_with_a_name_filter() -> None:
    servicer = SimServicer(SimProvider(PluginLifecycle()), PluginLifecycle())
    m = wire.pb()

    schemas = servicer.GetProviderSchema(m.GetProviderSchema.Request(), None).list_resource_schemas
    listed = servicer.GetMetadata(m.GetMetadata.Request(), None).list_resources

    assert sorted(schemas) == sorted(r.type_name for r in listed) == [
        "sim_config", "sim_health_check", "sim_network", "sim_vm"]
    assert [(a.name, a.optional) for a in schemas["sim_vm"].block.attributes] == [("name", True)]


def test_a_type_the_sim_does_not_list_is_one_error_event() -> None:
    servicer = SimServicer(SimProvider(PluginLifecycle()), PluginLifecycle())

    [event] = _list(servicer, "sim_nothing")

    assert "no list resource" in event.diagnostic[0].summary
    assert servicer.ValidateListResourceConfig(wire.pb().ValidateListResourceConfig.Request(
        type_name="sim_nothing"), None).diagnostics


def test_the_scratch_folder_links_the_modules_files_and_copies_its_lock_file_but_no_state_or_query(
        tmp_path: Path) -> None:
    module = tmp_path / "module"
    (module / ".terraform").mkdir(parents=True)
    (module / "modules" / "child").mkdir(parents=True)
    for name in ("main.tf", "terraform.tfvars", "terraform.tfstate", "errored.tfstate", "mine.tfquery.hcl",
                 ".terraform.lock.hcl"):
        (module / name).write_text(name)
    at = tmp_path / "run" / "lookup.1.module"
    at.parent.mkdir()

    query.scratch_folder(module, at, "sim_vm")

    assert sorted(p.name for p in at.iterdir()) == [".terraform.lock.hcl", "hyops.tfquery.hcl", "main.tf",
                                                    "modules", "terraform.tfvars"]
    assert (at / "main.tf").is_symlink() and (at / "modules").is_symlink()
    assert not (at / ".terraform.lock.hcl").is_symlink()  # the engine never writes through to the user's
    assert (at / "hyops.tfquery.hcl").read_text() == query.list_block("sim_vm")
