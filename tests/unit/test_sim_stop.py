"""The sim provider stops as a Go (go-plugin) provider does: SIGINT ignored; StopProvider
answered with success, new resource calls refused with an error diagnostic, calls in flight
left to finish; the process leaves on go-plugin's Shutdown.

The plugin tests talk to a real `python -m hybridops_tf.sim` over its gRPC socket, as the
engine does; the `hang` tests drive SimCloud in-process with a real thread."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.sim import wire
from hybridops_tf.sim.cloud import SimCloud
from hybridops_tf.sim.faults import OnStop, parse_rules
from hybridops_tf.sim.lifecycle import PluginLifecycle
from hybridops_tf.sim.servicer import STOPPING_SUMMARY
from hybridops_tf.sim.store import SimStore
from tests.sim_calls import read_calls

VM_PLAN = {"name": "web", "network_id": "net-00000001", "size": "small"}
SIGINT_BIT = 1 << (signal.SIGINT - 1)


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Any]]:
    """A sim provider process as the engine starts it, and a gRPC channel to it."""
    grpc = pytest.importorskip("grpc")
    env = {**os.environ, "HYOPS_SIM_ROOT": str(tmp_path / "cloud"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "hybridops_tf.sim"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    channel = None
    try:
        assert proc.stdout is not None
        _core, _proto, network, address, _grpc, cert = proc.stdout.readline().strip().split("|")
        assert network == "unix"
        der = base64.b64decode(cert + "=" * (-len(cert) % 4))
        pem = b"-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der) + b"-----END CERTIFICATE-----\n"
        channel = grpc.secure_channel(f"unix:{address}", grpc.ssl_channel_credentials(root_certificates=pem),
                                      options=[("grpc.ssl_target_name_override", "localhost")])
        yield proc, channel
    finally:
        if channel is not None:
            channel.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def _ignores(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_plugin_ignores_sigint_and_survives_one(plugin: tuple[subprocess.Popen[str], Any]) -> None:
    proc, _channel = plugin
    assert _ignores(proc.pid) & SIGINT_BIT, "SIGINT is not ignored: a terminal's Ctrl-C would kill the plugin"
    os.kill(proc.pid, signal.SIGINT)
    assert _ignores(proc.pid) & SIGINT_BIT and proc.poll() is None  # an ignored signal is dropped at once


def test_after_stop_provider_new_resource_calls_are_refused_and_shutdown_ends_the_process(
    plugin: tuple[subprocess.Popen[str], Any],
) -> None:
    pb = wire.pb()
    proc, channel = plugin
    provider = ProviderCalls(channel)
    assert provider.GetProviderSchema(pb.GetProviderSchema.Request()).resource_schemas

    assert provider.StopProvider(pb.StopProvider.Request()).Error == ""
    assert proc.poll() is None, "StopProvider ended the process: calls in flight would die with it"

    prior = pb.DynamicValue(json=b'{"id": "vm-0000abcd", "name": "web"}')
    applied = provider.ApplyResourceChange(
        pb.ApplyResourceChange.Request(type_name="sim_vm", prior_state=prior, planned_state=prior))
    planned = provider.PlanResourceChange(
        pb.PlanResourceChange.Request(type_name="sim_vm", prior_state=prior, proposed_new_state=prior))
    read = provider.ReadResource(pb.ReadResource.Request(type_name="sim_vm", current_state=prior))
    for answer in (applied, planned, read):
        (diag,) = answer.diagnostics
        assert diag.severity == pb.Diagnostic.ERROR and diag.summary == STOPPING_SUMMARY
    # the engine keeps the object as it was: an empty new state would read as "deleted"
    assert applied.new_state == prior and read.new_state == prior
    # what does no resource work still answers (the engine may ask for the schema)
    assert provider.GetProviderSchema(pb.GetProviderSchema.Request()).resource_schemas

    channel.unary_unary("/plugin.GRPCController/Shutdown", request_serializer=bytes,
                        response_deserializer=bytes)(b"", timeout=30)
    assert proc.wait(timeout=30) == 0


def test_the_plugin_declares_an_identity_for_every_type_and_answers_each_object_with_it(
    plugin: tuple[subprocess.Popen[str], Any],
) -> None:
    pb = wire.pb()
    _proc, channel = plugin
    provider = ProviderCalls(channel)
    schemas = provider.GetResourceIdentitySchemas(pb.GetResourceIdentitySchemas.Request()).identity_schemas
    assert set(schemas) == {"sim_network", "sim_vm", "sim_config", "sim_health_check"}
    assert [(a.name, a.required_for_import) for a in schemas["sim_vm"].identity_attributes] == [("id", True)]

    provider.ConfigureProvider(pb.ConfigureProvider.Request())
    config = wire.encode({"id": wire.UNKNOWN, "name": "n", "cidr": "10.0.0.0/24"})
    made = provider.ApplyResourceChange(pb.ApplyResourceChange.Request(
        type_name="sim_network", prior_state=wire.encode(None), planned_state=config))
    state = wire.decode(made.new_state)
    assert not made.diagnostics and wire.decode(made.new_identity.identity_data) == {"id": state["id"]}

    by_identity = provider.ImportResourceState(pb.ImportResourceState.Request(
        type_name="sim_network", identity=wire.identity_data({"id": state["id"]})))
    (imported,) = by_identity.imported_resources
    assert wire.decode(imported.state)["id"] == state["id"]
    assert wire.decode(imported.identity.identity_data) == {"id": state["id"]}


class ProviderCalls:
    """`tfplugin6.Provider` calls over a channel, typed by the generated messages (wire.py)."""

    def __init__(self, channel: Any) -> None:
        self._channel = channel

    def __getattr__(self, method: str) -> Any:
        response = getattr(wire.pb(), method).Response
        call = self._channel.unary_unary(f"/tfplugin6.Provider/{method}",
                                         request_serializer=lambda m: m.SerializeToString(),
                                         response_deserializer=response.FromString)
        return lambda request: call(request, timeout=30)


# ----- the `hang` fault and the stop, in-process -----
@pytest.fixture
def cloud(tmp_path: Path) -> SimCloud:
    store = SimStore(tmp_path / "cloud")
    store.create("sim_network", "net", {"cidr": "10.1.0.0/24"}, "net-00000001")
    lifecycle = PluginLifecycle()
    return SimCloud(store, stopping=lifecycle.stopping, leaving=lifecycle.leaving)


def _hang_in_thread(cloud: SimCloud, tmp_path: Path, **rule: Any) -> tuple[threading.Thread, dict[str, Any], Path]:
    release, started = tmp_path / "release", tmp_path / "started"
    cloud.rules = parse_rules([{"type": "sim_vm", "op": "create", "mode": "hang", "hang_until": str(release),
                                "hang_started": str(started), "seconds": 60, **rule}])
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.update(out=cloud.create("sim_vm", VM_PLAN)))
    worker.start()
    deadline = time.monotonic() + 30
    while not started.exists():
        assert time.monotonic() < deadline, "the hang never started"
        time.sleep(0.01)
    return worker, result, release


def test_on_stop_defaults_to_abort_and_keeps_old_rule_keys() -> None:
    raw = {"type": "sim_vm", "op": "create", "mode": "hang"}
    (plain,) = parse_rules([raw])
    (explicit,) = parse_rules([{**raw, "on_stop": "abort"}])
    (finish,) = parse_rules([{**raw, "on_stop": "finish"}])
    assert plain.on_stop is OnStop.ABORT and plain == explicit and plain.key == explicit.key
    assert finish.on_stop is OnStop.FINISH and finish.key != plain.key


def test_a_hang_aborts_on_stop_by_default_and_creates_nothing(cloud: SimCloud, tmp_path: Path) -> None:
    worker, result, release = _hang_in_thread(cloud, tmp_path, seconds=600)
    try:
        assert cloud.stopping is not None
        cloud.stopping.set()
        worker.join(30)
        assert not worker.is_alive(), "the hang did not give up on the stop"
    finally:
        release.touch()
        worker.join(30)
    out = result["out"]
    assert out.state is None and "asked the provider to stop" in out.detail and "nothing was done" in out.detail
    assert cloud.store.list_objects("sim_vm") == []


def test_an_on_stop_finish_hang_runs_to_its_end_after_the_stop(cloud: SimCloud, tmp_path: Path) -> None:
    worker, result, release = _hang_in_thread(cloud, tmp_path, on_stop="finish")
    try:
        assert cloud.stopping is not None
        cloud.stopping.set()
        worker.join(0.3)  # not a race: the gate stays shut until the file below exists
        assert worker.is_alive() and cloud.store.list_objects("sim_vm") == []
    finally:
        release.touch()
        worker.join(30)
    out = result["out"]
    assert out.error is None and out.state is not None
    assert [o.id for o in cloud.store.list_objects("sim_vm")] == [out.state["id"]]


def test_a_hang_never_goes_on_once_the_process_is_leaving(cloud: SimCloud, tmp_path: Path) -> None:
    worker, result, release = _hang_in_thread(cloud, tmp_path, on_stop="finish")
    try:
        assert cloud.leaving is not None
        cloud.leaving.set()
        worker.join(30)
        assert not worker.is_alive()
    finally:
        release.touch()
        worker.join(30)
    assert result["out"].state is None and cloud.store.list_objects("sim_vm") == []


def test_the_stop_is_logged_as_a_call(cloud: SimCloud) -> None:
    cloud.note_stop()
    (call,) = read_calls(cloud.store)
    assert call["op"] == "stop" and call["pid"] == os.getpid()
