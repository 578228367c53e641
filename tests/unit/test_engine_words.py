"""Every engine failure says the engine's own words and names its log (issue 23 item 2).

The init error boxes (init has no -json before Terraform 1.9), and hyops's own HCL read of a
broken file said as the engine says it: file, line, what was expected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.base.errors import UsageError
from hybridops_tf.engine.runner import error_blocks
from hybridops_tf.inputs.declarations import parse_hcl_text

INIT_FAILED = """
Initializing provider plugins...
- Finding hashicorp/null versions matching "9.9.9"...
\u2577
\u2502 Error: Failed to query available provider packages
\u2502 
\u2502 Could not retrieve the list of available versions for provider
\u2502 hashicorp/null: could not connect to registry.terraform.io
\u2575

\u2577
\u2502 Error: Unsupported block type
\u2502 
\u2502 Blocks of type "removed" are not expected here.
\u2575
"""


def test_init_errors_are_given_whole_summary_and_detail_each() -> None:
    assert error_blocks(INIT_FAILED) == (
        "Error: Failed to query available provider packages: Could not retrieve the list of available "
        "versions for provider hashicorp/null: could not connect to registry.terraform.io; "
        "Error: Unsupported block type: Blocks of type \"removed\" are not expected here.")


def test_output_without_an_error_box_falls_back_to_its_last_line() -> None:
    assert error_blocks("something went wrong\nexit status 1\n") == "exit status 1"


@pytest.mark.parametrize(("text", "said"), [
    ('variable "x" {\n  type = string\n', "line 3, column 1: Unclosed configuration block: there is no "
                                          "closing brace '}' for a block before the end of the file"),
    ('variable "x" {\n  type = = string\n}\n', "line 2, column 10: Invalid syntax: unexpected '= string'"),
])
def test_a_broken_file_is_said_with_its_line_and_what_was_expected(text: str, said: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_hcl_text(text, Path("main.tf"))

    assert info.value.message.startswith(f"cannot parse main.tf {said}")
    assert "Token(" not in info.value.message and "$END" not in info.value.message
