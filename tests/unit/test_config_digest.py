"""What a member was applied from, without an engine: which files count as its configuration
(engine/module_tree.py, operation/config_digest.py), how they are digested, and when an `ok`
record vouches for a run now (record/applied.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hybridops_tf.engine import module_tree
from hybridops_tf.operation import config_digest
from hybridops_tf.record import transitions
from hybridops_tf.record.applied import AppliedFrom, changes
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import OperationRecord, Owner, RecordEngine

KEY = b"k" * 32
ROOT_TF = 'module "net" {\n  source = "./net"\n}\n'


def _module(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "net").mkdir(parents=True)
    (root / "main.tf").write_text(ROOT_TF)
    (root / "net" / "main.tf").write_text('resource "sim_network" "n" {\n  name = "a"\n}\n')
    return root


def _digest(root: Path, env: dict[str, object] | None = None, key: bytes = KEY) -> str:
    return config_digest.config_digest(root, env or {}, key)


@pytest.mark.parametrize("name", ["main.tf", "x.tf.json", "a.tofu", "a.tofu.json", "override.tf"])
def test_the_engine_reads_configuration_files(name: str) -> None:
    assert module_tree.is_config_file(name)


@pytest.mark.parametrize("name", [".#main.tf", ".hidden.tf", "main.tf~", "#main.tf#", "main.tf.swp",
                                  "main.tftest.hcl", "terraform.tfstate", "README.md", "main.tf.bak"])
def test_names_the_engine_ignores_are_not_configuration(name: str) -> None:
    assert not module_tree.is_config_file(name)


def test_local_sources_are_found_in_hcl_and_json() -> None:
    assert module_tree.local_sources('module "a" {\n  source = "./a"\n}\n') == ["./a"]
    assert module_tree.local_sources('{"module": {"b": {"source": "../b"}}}') == ["../b"]
    assert module_tree.local_sources('module "r" {\n  source = "hashicorp/consul/aws"\n}\n') == []
    assert module_tree.local_sources('resource "x" "y" {\n  data_source = "./z"\n}\n') == []


def test_the_files_are_the_tree_the_lock_file_and_the_var_files(tmp_path: Path) -> None:
    root = _module(tmp_path)
    for name in ("terraform.tfvars", "b.auto.tfvars", "a.auto.tfvars.json", ".terraform.lock.hcl",
                 "prod.tfvars", "terraform.tfstate", "main.tf~"):
        (root / name).write_text("x = 1\n")
    (root / ".terraform").mkdir()
    (root / ".terraform" / "x.tf").write_text("")
    (root / "unused").mkdir()
    (root / "unused" / "main.tf").write_text("")

    names = [os.path.relpath(p, root) for p in config_digest.module_files(root)]

    assert names == ["main.tf", "net/main.tf", "terraform.tfvars", "a.auto.tfvars.json", "b.auto.tfvars",
                     ".terraform.lock.hcl"]


def test_the_listing_names_files_relative_to_the_root_in_path_order(tmp_path: Path) -> None:
    root = tmp_path / "root"
    listed = config_digest.listing(root, [(root / "z.tf", b"z"), (tmp_path / "shared" / "a.tf", b"a"),
                                          (root / "a.tf", None)])

    assert [name for name, _ in listed] == ["../shared/a.tf", "a.tf", "z.tf"]
    assert dict(listed)["a.tf"] == "unreadable"


def test_the_digest_is_keyed_and_follows_every_file_and_the_environment(tmp_path: Path) -> None:
    root = _module(tmp_path)
    first = _digest(root)
    assert first.startswith(config_digest.PREFIX)
    assert _digest(root) == first
    assert _digest(root, key=b"o" * 32) != first
    assert _digest(root, {"name": "x"}) != first

    (root / "net" / "main.tf").write_text('resource "sim_network" "n" {\n  name = "b"\n}\n')
    second = _digest(root)
    assert second != first
    (root / "terraform.tfvars").write_text('name = "c"\n')
    assert _digest(root) != second


def test_what_the_engine_does_not_read_leaves_the_digest_alone(tmp_path: Path) -> None:
    root = _module(tmp_path)
    first = _digest(root)
    (root / "terraform.tfstate").write_text("{}")
    (root / "errored.tfstate").write_text("{}")
    (root / ".#main.tf").write_text("user@host")
    (root / "main.tf~").write_text("old")
    (root / ".terraform").mkdir()
    (root / ".terraform" / "modules.json").write_text("{}")
    (root / "net" / "terraform.tfvars").write_text("x = 1\n")  # a child's var files: never read
    (root / "net" / ".terraform.lock.hcl").write_text("")

    assert _digest(root) == first


def test_a_checkout_in_another_place_digests_alike(tmp_path: Path) -> None:
    one = _module(tmp_path / "a")
    two = _module(tmp_path / "b")
    assert _digest(one) == _digest(two)


def _ok(**over: object) -> OperationRecord:
    rec = OperationRecord(module_ref="s/m", status=Status.OK, run_id="apply-1", config_digest="c1",
                          inputs_digest="i1", engine=RecordEngine("/bin/terraform", "1.0.3"))
    for name, value in over.items():
        setattr(rec, name, value)
    return rec


NOW = AppliedFrom("c1", "i1", "/bin/terraform", "1.0.3")


def test_an_ok_record_applied_from_exactly_this_vouches_for_it() -> None:
    assert changes(_ok(), NOW) == ()
    assert changes(_ok(workspace="default"), NOW) == ()


@pytest.mark.parametrize(("over", "now", "why"), [
    ({"config_digest": "c0"}, NOW, "its configuration changed"),
    ({"config_digest": None}, NOW, "its record does not say which configuration it applied"),
    ({"inputs_digest": "i0"}, NOW, "its inputs changed"),
    ({"inputs_digest": None}, NOW, "its inputs changed"),
    ({"engine": RecordEngine("/bin/terraform", "1.0.2")}, NOW,
     "the engine changed (/bin/terraform 1.0.2 -> /bin/terraform 1.0.3)"),
    ({"engine": RecordEngine("/bin/tofu", "1.0.3")}, NOW,
     "the engine changed (/bin/tofu 1.0.3 -> /bin/terraform 1.0.3)"),
    ({"engine": None}, NOW, "the engine changed (unknown -> /bin/terraform 1.0.3)"),
    ({"workspace": "blue"}, NOW, "its workspace changed (blue -> default)"),
    ({"status": Status.ERROR}, NOW, "its record is error, not ok"),
])
def test_anything_changed_or_unknown_is_a_reason_to_run(over: dict[str, object], now: AppliedFrom,
                                                         why: str) -> None:
    assert why in changes(_ok(**over), now)


def _start(command: Command, digest: str | None) -> transitions.RunStart:
    return transitions.RunStart(
        command=command, module_ref="s/m", module_dir="/m", run_id="r-2",
        owner=Owner(pid=1, host="h", user="u", run_id="r-2"), resolved_inputs_file="/r",
        rerun_inputs_file="/rr", inputs_digest="i2", engine=RecordEngine("/bin/terraform", "1.0.3"),
        config_digest=digest)


def test_only_a_run_that_applies_the_configuration_records_one() -> None:
    assert transitions.begin(_ok(), _start(Command.APPLY, "c2")).config_digest == "c2"
    # a refresh or an import applies no configuration: the old digest must not survive it
    assert transitions.begin(_ok(), _start(Command.REFRESH, None)).config_digest is None


def test_a_changed_configuration_without_a_lock_file_here_names_the_lock_file(tmp_path: Path) -> None:
    """Issue 45, item 5: in a fresh checkout without the committed .terraform.lock.hcl, --resume
    re-applied every member saying only that its configuration changed."""
    from dataclasses import replace

    missing = replace(NOW, config_digest="c2", lock_file_missing=True)

    (why,) = changes(_ok(), missing)
    assert ".terraform.lock.hcl" in why
    assert changes(_ok(), replace(NOW, lock_file_missing=True)) == ()  # the same digest: nothing to say
    assert config_digest.lock_file_missing(tmp_path)
    (tmp_path / ".terraform.lock.hcl").write_text("")
    assert not config_digest.lock_file_missing(tmp_path)
