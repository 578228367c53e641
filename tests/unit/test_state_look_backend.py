"""A fresh checkout of a module whose backend is not a local file (`pg`), before `init`: its
state was judged written outside hyops (another lineage, none, serial 0), and every queued
`--resume` re-applied the member; after `init` the same module was "not compared". The
verdict is one, whether `.terraform/` exists yet or not (runtime/state_look.py)."""

from __future__ import annotations

from pathlib import Path

from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.stamp import StateStamp
from hybridops_tf.runtime import state_look


def _record(directory: Path) -> OperationRecord:
    rec = OperationRecord("m", Status.OK, "apply-1", module_dir=str(directory))
    rec.state_seen = StateStamp(lineage="l-1", serial=3, objects={}, run_id="apply-1")
    return rec


def test_a_non_local_backend_before_init_is_not_compared_as_after_init(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('terraform {\n  backend "pg" {}\n}\n')

    before_init = state_look.look(_record(tmp_path))
    (tmp_path / ".terraform").mkdir()
    (tmp_path / ".terraform" / "terraform.tfstate").write_text("{}")
    after_init = state_look.look(_record(tmp_path))

    assert before_init.written is None and before_init.not_looked == state_look.NOT_LOCAL
    assert (after_init.written, after_init.not_looked) == (None, state_look.NOT_LOCAL)


def test_a_local_state_file_another_writer_moved_is_still_compared(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('terraform {\n  backend "local" {}\n}\n')
    (tmp_path / "terraform.tfstate").write_text('{"version": 4, "lineage": "l-2", "serial": 1, "resources": []}')

    seen = state_look.look(_record(tmp_path))

    assert seen.compared and seen.written is not None


def test_a_local_state_file_in_another_folder_than_the_records_is_not_compared(tmp_path: Path) -> None:
    """A member applied in another checkout keeps its state file there: this checkout's missing
    file is no evidence of another writer (a queued member another runner applied)."""
    there, here = tmp_path / "runner-a" / "network", tmp_path / "runner-b" / "network"
    for folder in (there, here):
        folder.mkdir(parents=True)
        (folder / "main.tf").write_text('resource "sim_network" "this" {}\n')
    rec = _record(there)

    seen = state_look.look(rec, here)

    assert (seen.written, seen.now) == (None, None)
    assert seen.not_looked == state_look.elsewhere_reason(str(there))
    assert state_look.state_here(rec, here) == (None, state_look.elsewhere_reason(str(there)))


def test_a_local_state_file_the_record_was_written_beside_is_compared_through_a_symlink(tmp_path: Path) -> None:
    """The same folder by another name (a symlinked checkout) is the record's folder."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "main.tf").write_text('resource "sim_network" "this" {}\n')
    (tmp_path / "link").symlink_to(tmp_path / "real")

    seen = state_look.look(_record(tmp_path / "real"), tmp_path / "link")

    assert seen.compared and seen.written is not None  # no state file where one was stamped: moved


def test_a_backend_state_is_not_elsewhere_the_engine_reads_it_from_any_checkout(tmp_path: Path) -> None:
    there, here = tmp_path / "a", tmp_path / "b"
    for folder in (there, here):
        folder.mkdir()
        (folder / "main.tf").write_text('terraform {\n  backend "pg" {}\n}\n')

    assert state_look.elsewhere(_record(there), here) is None
    assert state_look.state_here(_record(there), here) == (None, state_look.NOT_LOCAL)


def test_a_local_state_of_another_lineage_in_another_folder_is_not_compared_and_of_its_own_is(tmp_path: Path) -> None:
    """Another folder's state of the record's own lineage is its state, moved or copied (compared);
    of another lineage it is another checkout's own state, no writer of the record's."""
    there, here = tmp_path / "a", tmp_path / "b"
    there.mkdir()
    here.mkdir()
    state = here / "terraform.tfstate"
    state.write_text('{"version": 4, "lineage": "l-other", "serial": 7, "resources": []}')

    assert state_look.look(_record(there), here).not_looked == state_look.elsewhere_reason(str(there))
    state.write_text('{"version": 4, "lineage": "l-1", "serial": 7, "resources": []}')
    seen = state_look.look(_record(there), here)
    assert seen.compared and seen.written is not None and seen.written.now.serial == 7


def test_a_local_backend_that_names_its_file_is_read_by_the_engine_from_any_checkout(tmp_path: Path) -> None:
    """Runners that share one state file (`backend "local" { path = ... }`) read the same state
    from every checkout: never "another checkout's" state, so reconcile compares it through the
    engine; a `local` backend without a path keeps the folder's own file (store drill)."""
    there, here, plain = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for folder in (there, here):
        folder.mkdir()
        (folder / "backend.tf").write_text(f'terraform {{\n  backend "local" {{\n    path = "{tmp_path}/m.tfstate"\n'
                                           "  }\n}\n")
    plain.mkdir()
    (plain / "backend.tf").write_text('terraform {\n  backend "local" {}\n}\n')

    assert state_look.elsewhere(_record(there), here) is None
    assert state_look.state_here(_record(there), here) == (None, state_look.NOT_LOCAL)
    assert state_look.elsewhere(_record(there), plain) is not None


def _inited(directory: Path, backend: str, config: dict[str, str | None]) -> None:
    """`.terraform/terraform.tfstate` as the engine's init writes it for `backend`."""
    import json

    (directory / ".terraform").mkdir()
    (directory / ".terraform" / "terraform.tfstate").write_text(json.dumps(
        {"version": 3, "serial": 1, "lineage": "b", "backend": {"type": backend, "config": config, "hash": 1}}))


def test_a_local_backend_that_names_no_file_keeps_the_state_in_the_folder_after_init_too(tmp_path: Path) -> None:
    """`backend "local" {}` after init: the engine keeps the state in the folder's own file, so
    another checkout's record is judged elsewhere here as without the block, never compared
    (through the engine) with this checkout's empty state."""
    there, here = tmp_path / "runner-a" / "network", tmp_path / "runner-b" / "network"
    for folder in (there, here):
        folder.mkdir(parents=True)
        (folder / "main.tf").write_text('terraform {\n  backend "local" {}\n}\n')
    _inited(here, "local", {"path": None, "workspace_dir": None})

    assert state_look.elsewhere(_record(there), here) is not None
    (here / "terraform.tfstate").write_text('{"version": 4, "lineage": "l-1", "serial": 3, "resources": []}')
    assert state_look.look(_record(here)).compared


def test_a_backend_init_configured_is_not_read_as_the_folders_file(tmp_path: Path) -> None:
    for name, backend, config in (("named", "local", {"path": "/shared/x.tfstate", "workspace_dir": None}),
                                  ("pg", "pg", {"conn_str": None})):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "terraform.tfstate").write_text('{"version": 4, "lineage": "l-1", "serial": 3, "resources": []}')
        _inited(folder, backend, config)
        assert _stamp(folder) is None, name
    broken = tmp_path / "broken"
    (broken / ".terraform").mkdir(parents=True)
    (broken / ".terraform" / "terraform.tfstate").write_text("{")
    assert _stamp(broken) is None


def _stamp(folder: Path) -> object:
    from hybridops_tf.record.stamp import cheap_stamp

    return cheap_stamp(folder, None, env={"PATH": "/bin"})
