"""`hyops store status` and `hyops store import-local` on the SQLite store (store/sqlite.py),
through the Admin capability (store/ports.py) the PostgreSQL store answers too
(tests/integration/test_shared_store.py); the local root has none (exit 2)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hybridops_tf.cli.main import cli
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.store import Store, local_root, open_store
from hybridops_tf.store.documents import DRIFT_SEEN, RERUN_INPUTS, STACK_REPORT
from hybridops_tf.store.url import configure

RUN = "stack-apply-20240101T000000Z-00000000"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """cwd: a folder with a SQLite store's folder (`store/`) and a local runtime root `.hyops`."""
    (tmp_path / "store").mkdir(mode=0o700)
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)
        configure(None)  # the CLI's --store is process-wide


def hyops(project: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--runtime-root", ".hyops", "--store", f"sqlite:///{project}/store/h.db", *args])


def the_sqlite_store(project: Path) -> Store:
    """The CLI's SQLite store, as another runtime root (`elsewhere`) on the same file sees it."""
    configure(f"sqlite:///{project}/store/h.db")
    try:
        return open_store(project / "elsewhere")
    finally:
        configure(None)


def record(ref: str, run_id: str, updated_at: str) -> OperationRecord:
    return OperationRecord(module_ref=ref, status=Status.OK, run_id=run_id, updated_at=updated_at)


def test_store_status_counts_the_records_and_names_a_live_locks_holder(project: Path) -> None:
    store = the_sqlite_store(project)
    store.write(record("net", "apply-1", "2024-01-01T00:00:00Z"))
    store.write(record("vm", "apply-2", "2024-01-01T00:00:00Z"))

    with store.lock("vm", "apply-holding"):  # a flock: a probe on another descriptor finds it held
        held = hyops(project, "store", "status", "--json")
    free = hyops(project, "store", "status")

    assert held.exit_code == 0, held.output
    summary = json.loads(held.output)
    assert summary["store"] == str(project / "store" / "h.db") and summary["records"] == 2
    assert summary["schema_version"] >= 1
    assert [lock["key"] for lock in summary["locks_held"]] == ["vm"]
    assert f"pid {os.getpid()}" in summary["locks_held"][0]["holder"]
    assert "apply-holding" in summary["locks_held"][0]["holder"]
    assert free.exit_code == 0, free.output
    assert "SQLite" in free.output and "locks held:     0" in free.output


def test_store_status_on_the_local_root_is_refused_with_exit_2(project: Path) -> None:
    out = CliRunner().invoke(cli, ["--runtime-root", ".hyops", "store", "status"])

    assert out.exit_code == 2, out.output


def _local_root(project: Path) -> None:
    """A local root with two records, their documents, and a stack run killed mid-way (its
    report says every member pending; its lines say network ok)."""
    local = local_root(project / ".hyops")
    local.write(record("net", "apply-1", "2024-01-01T00:00:00Z"), stamp=False)
    local.write(record("vm", "apply-old", "2024-01-01T00:00:00Z"), stamp=False)
    for key in ("net", "vm"):
        local.put_document(RERUN_INPUTS, key, f"# {key}: local inputs\n")
        local.put_document(DRIFT_SEEN, key, f'{{"local": "{key}"}}\n')
    local.put_document(STACK_REPORT, "demo", json.dumps({
        "schema_version": 1, "stack": "demo", "stack_file": "s.yml", "run_id": RUN, "command": "apply",
        "started_at": "2024-01-01T00:00:00Z", "finished_at": None,
        "members": [{"name": "network", "module_ref": "demo/network", "status": "pending"}]}) + "\n")
    local.append_document_line(STACK_REPORT, "demo", RUN, json.dumps(
        {"run": RUN, "name": "network", "status": "ok", "run_id": "apply-1", "error": None}))


def test_import_local_copies_records_documents_and_a_killed_runs_lines_once(project: Path) -> None:
    _local_root(project)
    store = the_sqlite_store(project)
    store.write(record("vm", "apply-newer", "2025-01-01T00:00:00Z"), stamp=False)  # the store moved on
    store.put_document(RERUN_INPUTS, "vm", "# vm: the newer run's inputs\n")

    first = hyops(project, "store", "import-local", ".hyops")
    again = hyops(project, "store", "import-local", ".hyops")

    assert first.exit_code == 0 and again.exit_code == 0, first.output + again.output
    assert "1 records (1 kept" in first.output and "0 records (2 kept" in again.output
    other = the_sqlite_store(project)
    net, vm = other.read("net"), other.read("vm")
    assert net is not None and net.run_id == "apply-1"
    assert vm is not None and vm.run_id == "apply-newer"
    assert other.fetch_document(RERUN_INPUTS, "net").read_text() == "# net: local inputs\n"
    # the store's newer record keeps the documents that speak of it
    assert other.fetch_document(RERUN_INPUTS, "vm").read_text() == "# vm: the newer run's inputs\n"
    assert not other.fetch_document(DRIFT_SEEN, "vm").exists()
    report = json.loads(other.fetch_document(STACK_REPORT, "demo").read_text())
    assert [(m["name"], m["status"], m.get("run_id")) for m in report["members"]] == [("network", "ok", "apply-1")]


def test_import_local_of_a_folder_without_records_is_refused_with_exit_2(project: Path) -> None:
    (project / "empty").mkdir()

    out = hyops(project, "store", "import-local", "empty")

    assert out.exit_code == 2, out.output
