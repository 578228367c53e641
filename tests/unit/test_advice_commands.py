"""Every command record/advice.py builds, read whole as a person would paste it: what
scripts/mutation.py found surviving the tests that read advice through reconcile.

Each test is one builder's rule: the module's directory, ref and workspace on every hyops
command; the engine's own commands in the module's workspace; the inputs a rerun needs; each
argument quoted for a shell."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hybridops_tf.record.advice import Commands, Where, display_dir, reconcile_command, where_of

HERE = Where("demo/net", "modules/my net", "staging", inputs_args=("--inputs", "a b.yml"))
BARE = Where("demo/net", None)
CMD = Commands("hyops --store x", "terraform")
MODULE = "hyops --store x {} 'modules/my net' --ref demo/net --workspace staging"


def test_every_module_command_names_its_directory_ref_and_workspace_quoted() -> None:
    assert CMD.reconcile(HERE) == MODULE.format("reconcile")
    assert CMD.write(HERE) == MODULE.format("reconcile") + " --write"
    assert CMD.forget_record(HERE) == MODULE.format("reconcile") + " --forget-record"
    assert CMD.forget(HERE, "sim_vm.a[\"k\"]") == MODULE.format("reconcile") + " --forget-orphan 'sim_vm.a[\"k\"]'"
    assert CMD.forget_missing(HERE, "vm 1") == MODULE.format("reconcile") + " --forget-missing 'vm 1'"


def test_apply_destroy_plan_and_refresh_carry_the_inputs_a_rerun_needs() -> None:
    assert CMD.apply(HERE) == MODULE.format("apply") + " --inputs 'a b.yml'"
    assert CMD.destroy(HERE) == MODULE.format("destroy") + " --inputs 'a b.yml'"
    assert CMD.plan(HERE) == MODULE.format("plan") + " --inputs 'a b.yml'"
    assert CMD.refresh(HERE) == MODULE.format("apply") + " --inputs 'a b.yml' -- -refresh-only"


def test_a_module_whose_directory_is_unknown_says_module_dir_and_no_workspace_in_the_default_one() -> None:
    assert Commands().reconcile(BARE) == "hyops reconcile MODULE_DIR --ref demo/net"
    assert Commands().init(BARE) == "hyops init MODULE_DIR --ref demo/net"
    assert Commands().init(BARE, "-upgrade", "-x y") == "hyops init MODULE_DIR --ref demo/net -- -upgrade '-x y'"


def test_an_import_names_the_address_and_id_or_a_placeholder_for_it() -> None:
    assert CMD.import_(HERE, "sim_vm.a", "vm 1") == MODULE.format("reconcile") + " --import 'sim_vm.a=vm 1'"
    assert CMD.import_(HERE, "sim_vm.a", None) == MODULE.format("reconcile") + " --import 'sim_vm.a=<id>'"


def test_an_invoke_reruns_one_action_with_the_inputs_of_the_module_or_of_its_stack_file_now() -> None:
    assert CMD.invoke(HERE, "action.a.b") == MODULE.format("apply") + " --inputs 'a b.yml' -- -invoke=action.a.b"
    member = Where("demo/net", "modules/my net", "staging", inputs_args=("--inputs", "old.yml"),
                   stack_file="stack.yml", stack_args=("--var", "n=1"))
    assert CMD.invoke(member, "action.a.b") == MODULE.format("apply") + " --var n=1 -- -invoke=action.a.b"
    never_ran = Where("demo/net", "modules/my net", "staging", inputs_args=("--inputs", "old.yml"),
                      stack_file="stack.yml")
    assert CMD.invoke(never_ran, "action.a.b") == MODULE.format("apply") + " --inputs old.yml -- -invoke=action.a.b"


def test_a_stack_apply_resumes_unless_told_and_names_a_placeholder_without_a_stack_file() -> None:
    member = Where("r", "d", stack_file="my stack.yml")
    assert CMD.stack_apply(member) == "hyops --store x stack apply 'my stack.yml' --resume"
    assert CMD.stack_apply(BARE, resume=False) == "hyops --store x stack apply STACK_FILE"


@pytest.mark.parametrize(("workspace", "prefix"), [("staging", "TF_WORKSPACE=staging "), (None, "")])
def test_the_engines_own_commands_run_in_the_modules_workspace(workspace: str | None, prefix: str) -> None:
    where = Where("demo/net", "modules/my net", workspace)
    assert CMD.state_mv(where, "a.b", "a.c[\"k\"]") == (
        f"{prefix}terraform -chdir='modules/my net' state mv a.b 'a.c[\"k\"]'")
    assert CMD.state_rm(where, "a b") == f"{prefix}terraform -chdir='modules/my net' state rm 'a b'"
    assert CMD.push_errored(where) == f"{prefix}terraform -chdir='modules/my net' state push errored.tfstate"


def test_the_sims_commands_name_the_object_or_a_placeholder() -> None:
    assert CMD.sim_ls() == "hyops --store x sim ls"
    assert CMD.sim_rm("vm 1") == "hyops --store x sim rm 'vm 1'"
    assert CMD.sim_rm() == "hyops --store x sim rm '<id>'"


def test_an_import_block_writes_values_as_json_with_template_openers_escaped() -> None:
    assert Commands.import_block("sim_vm.a", {"id": "vm-${x}", "n": 2, "tag": "%{y}é"}) == (
        'import {\n  to       = sim_vm.a\n  identity = { id = "vm-$${x}", n = 2, tag = "%%{y}é" }\n}')


def test_a_modules_place_drops_the_default_workspace_and_shows_its_directory_from_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "modules" / "net").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert where_of("demo/net", tmp_path / "modules" / "net", "default") == Where("demo/net", "modules/net")
    assert where_of("demo/net", None, "blue") == Where("demo/net", None, "blue")
    assert reconcile_command("demo/net", tmp_path / "modules" / "net", "blue", "--write", hyops="h") == (
        "h reconcile modules/net --ref demo/net --workspace blue --write")


def test_a_directory_another_runner_recorded_is_found_in_this_checkout_by_its_longest_tail(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "checkout" / "modules" / "net"
    here.mkdir(parents=True)
    (here / "main.tf").write_text("")
    monkeypatch.chdir(tmp_path / "checkout")
    assert display_dir("/runner-9/work/modules/net") == os.path.join("modules", "net")
    assert display_dir("/runner-9/work/modules/gone") == "/runner-9/work/modules/gone"


def test_a_directory_outside_the_current_one_is_shown_from_here_inside_the_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "modules" / "vm").mkdir(parents=True)
    (tmp_path / "modules" / "net").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "modules" / "net")
    assert display_dir(tmp_path / "modules" / "vm", project_top=tmp_path) == os.path.join("..", "vm")
    assert display_dir(tmp_path / "modules" / "vm") == str(tmp_path / "modules" / "vm")


def test_reconcile_of_a_record_is_a_hyops_command_unless_told_otherwise() -> None:
    assert reconcile_command("demo/net", None, None) == "hyops reconcile MODULE_DIR --ref demo/net"


def test_a_recorded_directory_is_found_only_where_a_tail_of_it_holds_tf_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "modules" / "net").mkdir(parents=True)  # no .tf file: not the module
    monkeypatch.chdir(tmp_path)
    assert display_dir("/runner-9/work/modules/net") == "/runner-9/work/modules/net"


def test_a_recorded_directory_whose_whole_path_is_a_module_here_is_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hyops-absent-top" / "net").mkdir(parents=True)
    (tmp_path / "hyops-absent-top" / "net" / "main.tf").write_text("")
    monkeypatch.chdir(tmp_path)
    assert display_dir("/hyops-absent-top/net") == os.path.join("hyops-absent-top", "net")


def test_an_unreadable_directory_is_not_taken_for_the_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "modules" / "net").mkdir(parents=True)
    (tmp_path / "modules" / "net" / "main.tf").write_text("")
    monkeypatch.chdir(tmp_path)

    def unreadable(self: Path) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "iterdir", unreadable)
    assert display_dir("/runner-9/work/modules/net") == "/runner-9/work/modules/net"


def test_a_module_directory_under_here_not_made_yet_is_shown_from_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_dir(tmp_path / "modules" / "new") == os.path.join("modules", "new")


def test_from_outside_the_project_a_directory_in_it_is_shown_whole(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project" / "modules" / "vm").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    vm = tmp_path / "project" / "modules" / "vm"
    assert display_dir(vm, project_top=tmp_path / "project") == str(vm)


def test_with_the_current_directory_removed_a_directory_is_shown_as_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert display_dir(tmp_path / "modules" / "net") == str(tmp_path / "modules" / "net")
