"""`hyops plan`'s exit codes, decided in the core (plan/planner.py): under detailed exit
codes 2 means only "changes pending", so no error may exit 2 there."""

from __future__ import annotations

import pytest

from hybridops_tf.base.errors import ExitCode, OperationFailed, RefusedError, UsageError
from hybridops_tf.plan import planner


@pytest.mark.parametrize(("flag", "passthrough", "expected"), [
    (True, (), True),
    (False, ("-detailed-exitcode",), True),
    (False, ("-lock=false", "--detailed-exitcode"), True),
    (False, ("-lock=false",), False),
])
def test_detailed_exit_codes_are_asked_by_the_option_or_the_engine_flag_after_dashes(
    flag: bool, passthrough: tuple[str, ...], expected: bool
) -> None:
    assert planner.wants_detailed(flag, passthrough) is expected


def test_a_usage_error_exits_1_under_detailed_exit_codes_with_its_message() -> None:
    err = planner.reported_error(UsageError("no module at modules/nope"), detailed=True)

    assert isinstance(err, OperationFailed)
    assert (err.exit_code, err.message) == (ExitCode.FAILED, "no module at modules/nope")


def test_errors_keep_their_exit_code_without_detailed_exit_codes_or_when_not_2() -> None:
    usage, refused = UsageError("bad --var"), RefusedError("locked")

    assert planner.reported_error(usage, detailed=False) is usage
    assert planner.reported_error(refused, detailed=True) is refused
