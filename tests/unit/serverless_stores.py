"""The stores that run without a server, the local runtime root and the SQLite store, opened
alike so one contract test runs on each (tests/unit/test_module_lock.py, test_documents.py;
the `serverless` fixture of tests/unit/conftest.py), and a process that holds a module lock.
The PostgreSQL store's leg of the contract is the integration tests marked both_stores."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord, Owner, RecordEngine, ResourceEntry, SuspectOrphan
from hybridops_tf.store import Store, open_store
from hybridops_tf.store.url import configure

KINDS = ("local", "sqlite")
REF = "platform/network"


@dataclass(frozen=True)
class Serverless:
    """One store without a server: `url` ("" for the local root) and the folder its runtime
    roots go below; open(root) opens it as hyops does for that runtime root."""

    kind: str
    url: str
    base: Path

    @classmethod
    def make(cls, kind: str, base: Path) -> Serverless:
        url = ""
        if kind == "sqlite":
            (base / "db").mkdir(mode=0o700)
            url = f"sqlite:///{base / 'db' / 'h.db'}"
        return cls(kind, url, base)

    def open(self, root: str = "rt") -> Store:
        configure(self.url or None)
        try:
            return open_store(self.base / root)
        finally:
            configure(None)


HOLD_LOCK = """
import sys
from pathlib import Path
from hybridops_tf.store import open_store
from hybridops_tf.store.url import configure
configure(sys.argv[1] or None)
store = open_store(Path(sys.argv[2]))
with store.lock(sys.argv[3], "apply-child-run"):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def hold_lock(place: Serverless, key: str, root: str = "rt") -> subprocess.Popen[str]:
    """Another process holding `key`'s lock (run `apply-child-run`) until a line on its stdin;
    returned once it holds it."""
    child = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, place.url, str(place.base / root), key],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"
    return child


def full_record() -> OperationRecord:
    """A record with every field set (tests/unit/test_record.py; a store's round trip)."""
    return OperationRecord(
        module_ref=REF,
        status=Status.RUNNING,
        run_id="apply-20250101T000000Z-deadbeef",
        updated_at="2025-01-01T00:00:05Z",
        module_dir="/work/modules/platform/network",
        active_command="apply",
        started_at="2025-01-01T00:00:00Z",
        owner=Owner(pid=4242, host="ci-7", user="runner", run_id="apply-20250101T000000Z-deadbeef"),
        resolved_inputs_file="/rt/runs/platform__network/r/resolved.inputs.yml",
        rerun_inputs_file="/rt/config/modules/platform__network/rerun.inputs.yml",
        inputs_digest="sha256:abc",
        config_digest="hmac-sha256:config-v1:abc",
        workspace="blue",
        outputs={"network_id": "net-1", "token": {"sensitive": True}},
        resources={
            "sim_vm.b": ResourceEntry(status="error", action="create"),
            "sim_network.a": ResourceEntry(
                status="complete", action="create", id="net-1", tainted=True
            ),
        },
        suspect_orphans=[SuspectOrphan("sim_vm.b", "create", "apply-1", "2025-01-01T00:00:03Z")],
        previous_outputs={"network_id": "net-0"},
        engine=RecordEngine("/usr/bin/tofu", "1.8.0"),
    )
