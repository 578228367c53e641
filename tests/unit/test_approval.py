"""Approval (cli/approval.py) and the saved plan it applies (saved_plan.py): pure parts.

Who is asked, what counts as `yes`, how the stack summary reads; the sidecar's round trip
and refusals, and the exact argv of `apply PLANFILE` (no var file: the plan carries them).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.base.errors import ExitCode, RefusedError, UsageError
from hybridops_tf.cli import approval
from hybridops_tf.cli.main import cli
from hybridops_tf.engine import commands
from hybridops_tf.plan import saved
from hybridops_tf.plan.planner import MemberPlan


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize(("stdin", "stdout", "asks"), [(True, True, True), (True, False, False),
                                                       (False, True, False), (False, False, False)])
def test_only_a_terminal_on_both_stdin_and_stdout_is_asked(stdin: bool, stdout: bool, asks: bool) -> None:
    assert approval.must_ask(False, {}, Stream(stdin), Stream(stdout)) is asks


def test_auto_approve_and_the_environment_variable_skip_the_question() -> None:
    terminal = (Stream(True), Stream(True))
    assert approval.must_ask(True, {}, *terminal) is False
    assert approval.must_ask(False, {"HYOPS_AUTO_APPROVE": "1"}, *terminal) is False
    assert approval.must_ask(False, {"HYOPS_AUTO_APPROVE": "0"}, *terminal) is True


def test_the_engines_auto_approve_after_the_double_dash_counts_and_is_taken_out() -> None:
    assert approval.split_auto_approve(["-auto-approve", "-parallelism=2"]) == (True, ["-parallelism=2"])
    assert approval.split_auto_approve(["-parallelism=2"]) == (False, ["-parallelism=2"])


@pytest.mark.parametrize(("answer", "ok"), [("yes\n", True), (" yes \n", True), ("no\n", False),
                                            ("YES\n", False), ("y\n", False), ("", False)])
def test_only_yes_approves(answer: str, ok: bool) -> None:
    assert approval.approved(lambda: answer) is ok


def test_end_of_input_is_not_an_approval() -> None:
    def eof() -> str:
        raise EOFError

    assert approval.approved(eof) is False


def test_a_cancel_is_the_documented_refusal_code() -> None:
    assert approval.CANCELLED == ExitCode.REFUSED


def test_the_stack_summary_has_one_line_per_member_in_order() -> None:
    lines = approval.stack_summary_lines("demo", "apply", [
        MemberPlan("network", "demo/network", "1 to add, 0 to change, 0 to destroy", True),
        MemberPlan("vm", "demo/vm", "not planned yet: needs the outputs of network (known once applied)", True),
    ])
    assert lines[0] == "Plan of stack demo (apply):"
    assert [line.split()[0] for line in lines[1:]] == ["network", "vm"]


@pytest.mark.parametrize("command", ["apply", "destroy", "plan"])
def test_help_names_the_passthrough_and_lists_exit_codes(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "[-- ENGINE_ARGS]" in result.output
    assert "Exit codes:" in result.output


def test_without_a_terminal_apply_takes_auto_approve_and_proceeds_as_before(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(tmp_path / "rt"), "apply",
                                      str(tmp_path / "missing"), "--auto-approve"])
    assert result.exit_code == ExitCode.USAGE  # the usual module-directory error, no question
    assert approval.QUESTION not in result.output


# --- the saved plan approval applies --------------------------------------------------------

def _sidecar(**over: object) -> saved.Sidecar:
    fields: dict = {"module_ref": "network", "module_dir": "/m/network", "workspace": None, "mode": "apply",
                    "engine": {"binary": "/bin/tofu", "version": "1.6.0"}, "inputs_digest": "hmac-sha256:v1:00",
                    "inputs": {"name": "--var"}, "plan_sha256": "ab"}
    fields.update(over)
    return saved.Sidecar(**fields)


def test_the_sidecar_round_trips_and_holds_names_not_values() -> None:
    side = _sidecar(sensitive_inputs=("token",), partial_flags=("-target",))
    text = side.to_json()
    assert saved.Sidecar.parse(text, Path("x")) == side
    assert json.loads(text)["inputs"] == {"name": "--var"}


def test_a_sidecar_of_another_kind_or_version_is_a_usage_error() -> None:
    doc = json.loads(_sidecar().to_json())
    for broken in ({**doc, "schema_version": 99}, {**doc, "kind": "other"}, {"kind": saved.KIND}):
        with pytest.raises(UsageError):
            saved.Sidecar.parse(json.dumps(broken), Path("x"))


def test_a_plan_file_whose_bytes_changed_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "p.tfplan"
    plan.write_bytes(b"plan")
    saved.sidecar_path(plan).write_text(_sidecar(plan_sha256="0" * 64).to_json())
    with pytest.raises(RefusedError):
        saved.read(plan)


def test_another_ref_or_workspace_than_the_plans_is_refused() -> None:
    side = _sidecar(workspace="staging")
    with pytest.raises(RefusedError, match="made for module network"):
        saved._refuse_other_target(side, Path("p"), "vm", "staging")
    with pytest.raises(RefusedError, match="made for workspace staging"):
        saved._refuse_other_target(side, Path("p"), None, None)
    saved._refuse_other_target(side, Path("p"), "network", "staging")


def test_the_plan_mode_follows_destroy_and_refuses_refresh_only() -> None:
    assert saved.plan_mode(False, []) == "apply"
    assert saved.plan_mode(True, []) == "destroy"
    assert saved.plan_mode(False, ["-destroy"]) == "destroy"
    with pytest.raises(UsageError):
        saved.plan_mode(False, ["-refresh-only"])


def test_a_file_that_is_no_plan_archive_leaves_the_staleness_check_to_the_engine(tmp_path: Path) -> None:
    plan = tmp_path / "p.tfplan"
    plan.write_bytes(b"not a zip")
    assert saved.prior_state(plan) is None


def test_apply_of_a_saved_plan_keeps_only_the_flags_the_engine_takes_with_one() -> None:
    argv = commands.apply_saved("/bin/tofu", "/m", "/tmp/p.tfplan",
                                ["-target=a.b", "-parallelism=2", "-lock-timeout=3s", "-replace=x"])
    assert argv == ["/bin/tofu", "-chdir=/m", "apply", "-auto-approve", "-input=false", "-json",
                    "-parallelism=2", "-lock-timeout=3s", "/tmp/p.tfplan"]
    assert "-var-file=/dev/fd/0" not in argv


def test_state_pull_is_spelled_as_the_engine_expects() -> None:
    assert commands.state_pull("/bin/tofu", "/m") == ["/bin/tofu", "-chdir=/m", "state", "pull"]
