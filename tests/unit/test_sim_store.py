"""The sim object store: files on disk, parent checks, cascades, atomicity, concurrency."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import stat
import threading
from pathlib import Path

import pytest

from hybridops_tf.sim.cloud import SimCloud
from hybridops_tf.sim.store import (
    CallEntry,
    MissingParentError,
    SimRootError,
    SimStore,
    StoreError,
)
from tests.sim_calls import read_calls


@pytest.fixture
def store(tmp_path: Path) -> SimStore:
    return SimStore(tmp_path / "cloud")


def make_vm(store: SimStore, name: str = "vm") -> tuple[str, str]:
    net = store.create("sim_network", f"{name}-net", {"cidr": "10.0.0.0/16"})
    vm = store.create("sim_vm", name, {"network_id": net.id, "size": "small", "ip": "10.0.0.5"})
    return net.id, vm.id


def test_from_env_requires_the_root() -> None:
    with pytest.raises(SimRootError, match="HYOPS_SIM_ROOT is not set"):
        SimStore.from_env({})
    assert SimStore.from_env({"HYOPS_SIM_ROOT": "/tmp/x"}).root == Path("/tmp/x")


def test_object_files_are_private_versioned_json(store: SimStore) -> None:
    obj = store.create("sim_network", "net", {"cidr": "10.0.0.0/16"})
    assert re.fullmatch(r"net-[0-9a-f]{8}", obj.id)
    path = store.objects_dir / f"{obj.id}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == 1
    assert {k: doc[k] for k in ("type", "id", "name")} == {
        "type": "sim_network",
        "id": obj.id,
        "name": "net",
    }
    assert doc["created_at"].endswith("Z")
    assert store.get(obj.id) == obj


def test_id_prefixes(store: SimStore) -> None:
    _, vm_id = make_vm(store)
    cfg = store.create("sim_config", "c", {"vm_id": vm_id, "content": "x"})
    hc = store.create("sim_health_check", "h", {"target_id": vm_id, "status": "passing"})
    assert vm_id.startswith("vm-") and cfg.id.startswith("cfg-") and hc.id.startswith("hc-")


def test_update_and_list(store: SimStore) -> None:
    net_id, vm_id = make_vm(store)
    updated = store.update(vm_id, "vm", {"network_id": net_id, "size": "large", "ip": "10.0.0.5"})
    assert updated is not None and updated.attributes["size"] == "large"
    assert store.get(vm_id) == updated
    assert [o.type for o in store.list_objects()] == ["sim_network", "sim_vm"]
    assert store.update("vm-00000000", "x", {}) is None


def test_create_requires_an_existing_parent_of_the_right_type(store: SimStore) -> None:
    with pytest.raises(MissingParentError, match="does not name an existing sim_network"):
        store.create("sim_vm", "vm", {"network_id": "net-00000000"})
    net_id, _ = make_vm(store)
    with pytest.raises(MissingParentError, match="does not name an existing sim_vm"):
        store.create("sim_config", "c", {"vm_id": net_id})


def test_deleting_a_vm_deletes_only_its_configs(store: SimStore) -> None:
    net_id, vm_a = make_vm(store, "a")
    _, vm_b = make_vm(store, "b")
    cfg_a = store.create("sim_config", "ca", {"vm_id": vm_a}).id
    cfg_b = store.create("sim_config", "cb", {"vm_id": vm_b}).id
    hc = store.create("sim_health_check", "h", {"target_id": vm_a}).id
    assert store.delete(vm_a) == [vm_a, cfg_a]
    assert store.get(cfg_a) is None and store.get(cfg_b) is not None
    assert store.get(hc) is not None  # health checks do not cascade
    assert store.delete(net_id) == [net_id]  # networks do not cascade to vms
    assert store.delete(net_id) == []  # deleting twice is not an error


def test_failed_write_keeps_the_old_file_and_no_temp(
    store: SimStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    net_id, vm_id = make_vm(store)
    before = (store.objects_dir / f"{vm_id}.json").read_text()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        store.update(vm_id, "vm", {"network_id": net_id, "size": "huge"})
    monkeypatch.undo()
    assert (store.objects_dir / f"{vm_id}.json").read_text() == before
    assert sorted(p.name for p in store.objects_dir.iterdir()) == sorted(
        [f"{net_id}.json", f"{vm_id}.json"]
    )


def test_unreadable_objects_are_refused_loudly(store: SimStore) -> None:
    store.ensure()
    (store.objects_dir / "vm-deadbeef.json").write_text("{not json")
    with pytest.raises(StoreError, match=r"vm-deadbeef\.json: invalid JSON"):
        store.list_objects()
    (store.objects_dir / "vm-deadbeef.json").write_text('{"schema_version": 99}')
    with pytest.raises(StoreError, match="schema_version 1"):
        store.get("vm-deadbeef")
    with pytest.raises(StoreError, match="invalid object id"):
        store.get("../etc/passwd")


def test_concurrent_threads_create_and_delete_consistently(store: SimStore) -> None:
    """Ten provider threads at once (the engine's default parallelism)."""
    net_id, _ = make_vm(store, "seed")
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            own = SimStore(store.root)
            for i in range(10):
                vm = own.create("sim_vm", f"vm-{n}-{i}", {"network_id": net_id})
                own.create("sim_config", f"cfg-{n}-{i}", {"vm_id": vm.id})
                if i % 2:
                    own.delete(vm.id)
                own.record_call(CallEntry("create", "sim_vm", vm.name, vm.id))
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    vms = store.list_objects("sim_vm")
    configs = store.list_objects("sim_config")
    assert len(vms) == 1 + 50 and len(configs) == 50
    assert {c.attributes["vm_id"] for c in configs} <= {v.id for v in vms}
    assert len(read_calls(store)) == 100
    assert not [p for p in store.objects_dir.iterdir() if p.name.endswith(".tmp")]


def _fire_many(root: str, key: str, count: int) -> None:
    store = SimStore(Path(root))
    for _ in range(count):
        store.try_fire(key, None)
        store.record_call(CallEntry("read", "sim_vm", "x", "vm-00000000"))


def test_concurrent_processes_share_counts_and_the_call_log(store: SimStore) -> None:
    """Several provider processes on one root: the file lock keeps counts exact."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_fire_many, args=(str(store.root), "k", 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert store.fired_counts() == {"k": 100}
    calls = read_calls(store)
    assert len(calls) == 100 and len({c["pid"] for c in calls}) == 4


def test_secrets_are_stored_only_as_a_digest(tmp_path: Path) -> None:
    store = SimStore(tmp_path / "cloud")
    _, vm_id = make_vm(store)
    cloud = SimCloud(store)
    planned = {"name": "c", "vm_id": vm_id, "content": "x", "secret": "hunter2"}
    created = cloud.create("sim_config", planned).state
    assert created is not None and created["secret"] == "hunter2"
    for path in store.root.rglob("*"):
        if path.is_file():
            assert "hunter2" not in path.read_text()
    assert cloud.read("sim_config", created).state == created  # digest matches: no drift
    changed = cloud.read("sim_config", {**created, "secret": "other"}).state
    assert changed is not None and changed["secret"] is None  # mismatch shows as drift


def test_sim_rm_deletes_by_hand_and_refuses_an_id_that_is_not_live_without_deleting_any(
        store: SimStore, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from hybridops_tf.cli.main import cli

    net_id, vm_id = make_vm(store)
    runner = CliRunner()
    root = ["--runtime-root", str(tmp_path / "rt")]

    refused = runner.invoke(cli, [*root, "sim", "rm", vm_id, "vm-nope", "--sim-root", str(store.root)])
    assert refused.exit_code == 2 and "vm-nope" in refused.output and store.get(vm_id) is not None

    deleted = runner.invoke(cli, [*root, "sim", "rm", vm_id, "--sim-root", str(store.root)])
    assert deleted.exit_code == 0, deleted.output
    assert [o.id for o in store.list_objects()] == [net_id]
