"""The summaries a second CI runner prints name modules by their path in the repository, so
the commands they suggest run there: runner A applies from its checkout and is gone; runner B
checked the same repository out under another root and reads A's records from the shared
store. Without this, `status`/`reconcile --all --format markdown` on B suggested
`hyops reconcile /path/of/runner-a/modules/network ...`, a directory B does not have."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.helpers import copy_module
from tests.integration.hyops_cli import Hyops
from tests.integration.shared_store import SharedStore
from tests.readers import code_spans, parse_table

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def runner(base: Path, engine: str, sim_root: Path, store: SharedStore) -> Hyops:
    """A runner's checkout (modules/network) and its own .hyops; records in the store."""
    copy_module("network", base / "modules" / "network")
    (base / ".hyops").mkdir(mode=0o700)
    return Hyops(base, base / ".hyops", engine, sim_root, store.env(), store=store)


def next_commands(markdown: str) -> list[str]:
    return [c for row in parse_table(markdown.splitlines()) for c in code_spans(row["Next action"])]


def test_a_second_runner_gets_commands_relative_to_its_own_checkout(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    a = runner(tmp_path / "runner-a" / "builds" / "infra", engine_path, sim_root, pg_store)
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_after_create", "times": 1}])
    failed = a("apply", "modules/network")
    assert failed.returncode == 1, failed.stderr
    assert pg_store.record("network")["module_dir"] == str(a.workdir / "modules" / "network")
    shutil.rmtree(tmp_path / "runner-a")  # the runner and its checkout are gone

    b = runner(tmp_path / "runner-b" / "work" / "infra", engine_path, sim_root, pg_store)
    status = b("status", "--all", "--format", "markdown")
    reconcile = b("reconcile", "--all", "--format", "markdown")

    assert status.returncode == 0, status.stderr
    assert next_commands(status.stdout) == ["hyops reconcile modules/network --ref network"]
    assert reconcile.returncode in (1, 3), reconcile.stderr
    commands = next_commands(reconcile.stdout)
    assert commands and not [c for c in commands if "runner-a" in c], reconcile.stdout
    assert {shlex.split(c)[2] for c in commands if c.startswith("hyops ")} == {"modules/network"}

    again = b(*shlex.split(next_commands(status.stdout)[0])[1:])  # it runs on B, in B's checkout
    # exit 1: the record's state is a local file runner A's checkout kept, not compared on B
    # (runtime/state_look.py), never B's missing file taken for another writer
    assert again.returncode == 1 and "state_written_outside" not in again.stdout, again.stdout + again.stderr
    assert "does not exist" not in again.stderr
