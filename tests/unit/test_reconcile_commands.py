"""Next actions must be commands that run as pasted: with the inputs the module needs."""

from __future__ import annotations

from hybridops_tf.record.advice import Commands, Where


def test_apply_and_destroy_carry_the_last_runs_inputs_and_ask_for_secrets() -> None:
    where = Where("demo/vm", "modules/sim/vm",
                  inputs_args=("--inputs", ".hyops/config/modules/demo__vm/rerun.inputs.yml",
                               "--var", "token=<secret>"))
    cmds = Commands()

    assert cmds.apply(where) == ("hyops apply modules/sim/vm --ref demo/vm --inputs "
                                 ".hyops/config/modules/demo__vm/rerun.inputs.yml --var 'token=<secret>'")
    assert cmds.destroy(where).startswith("hyops destroy modules/sim/vm --ref demo/vm --inputs ")


def test_a_stack_member_that_never_ran_is_applied_through_its_stack() -> None:
    where = Where("demo/config", "modules/sim/config", stack_file="modules/sim/stack.yml")

    assert Commands().apply(where) == "hyops stack apply modules/sim/stack.yml --resume"


def test_a_stack_member_that_ran_is_applied_alone_with_the_stack_files_inputs_now() -> None:
    # its rerun.inputs.yml may hold an input the stack file no longer gives (issue 38)
    where = Where("demo/vm", "modules/sim/vm", inputs_args=("--inputs", "r.yml"),
                  stack_file="modules/sim/stack.yml", stack_args=("--var", "size=large", "--var", "token=<secret>"))

    assert Commands().apply(where) == ("hyops apply modules/sim/vm --ref demo/vm --var size=large "
                                       "--var 'token=<secret>'")
    assert Commands().destroy(where) == "hyops destroy modules/sim/vm --ref demo/vm --inputs r.yml"
    assert Commands().stack_apply(where) == "hyops stack apply modules/sim/stack.yml --resume"
    assert Commands().stack_apply(where, resume=False) == "hyops stack apply modules/sim/stack.yml"
