"""`hyops store import-local` and `hyops store status` on the SQLite store (store/sqlite.py)
with the real engine: a module applied on the local root moves into the file with its rerun
inputs, and a runner with another runtime root destroys it from there, as
tests/integration/test_shared_store.py shows for PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops
from tests.integration.sqlite_store import SqliteFile

pytestmark = [pytest.mark.integration]


def test_import_local_moves_a_record_into_the_sqlite_store_once_and_another_root_destroys_it(
    hyops: Hyops, module_copy: Callable[[str], Path], tmp_path: Path,
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network", "--var", "name=imported-net").returncode == 0  # a local record
    local = hyops.record("network")
    sqlite = SqliteFile(tmp_path / "store" / "records.db")
    sqlite.path.parent.mkdir(mode=0o700)
    other_root = tmp_path / "other-root"  # another runtime root on the same file: only the store is shared
    shared = Hyops(hyops.workdir, other_root, hyops.engine, hyops.sim_root, sqlite.env(), store=sqlite)

    first = shared("store", "import-local", str(hyops.runtime_root))
    again = shared("store", "import-local", str(hyops.runtime_root))
    status = shared("store", "status", "--json")

    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    assert "1 records" in first.stdout and "0 records (1 kept" in again.stdout
    assert sqlite.record("network") == local
    assert hyops.record("network") == local  # the local copy stays
    assert status.returncode == 0, status.stderr
    summary = json.loads(status.stdout)
    assert summary["records"] == 1 and summary["locks_held"] == []
    assert "imported-net" in (sqlite.document("rerun_inputs", "network") or "")  # the record's documents came too
    destroyed = shared("destroy", "modules/network")  # from another root, on the record the store holds
    assert destroyed.returncode == 0, destroyed.stderr
    assert sqlite.record("network")["status"] == "destroyed"
    assert [o for o in shared.sim_objects() if o["type"] == "sim_network"] == []
