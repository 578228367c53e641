"""HCL literal values decoded as the engine decodes them (inputs/hcl_values.py).

The expected values are what Terraform 1.11 gives for the same `.tfvars` text (checked with
`terraform output -json` of a module echoing the variable); tests/integration/
test_inputs_as_values.py compares with the engine itself on every engine of the suite.
"""

from __future__ import annotations

import pytest

from hybridops_tf.inputs.hcl_values import Expression, has_expression, parse_values


def one(text: str) -> object:
    return parse_values(f"v = {text}\n", "test.tfvars")["v"]


@pytest.mark.parametrize(("text", "value"), [
    ('"$${aws:username}"', "${aws:username}"),
    ('"%%{x}"', "%{x}"),
    ('"$${"', "${"),  # no closing brace: the engine reads it (python-hcl2's grammar alone would not)
    ('"%%{"', "%{"),
    (r'"\"q\" \\ \n \t \r"', '"q" \\ \n \t \r'),
    (r'"\u00e9 \U0001F600"', "é 😀"),
    ('"$"', "$"),
    ('"50%"', "50%"),
    ('"a$b%c"', "a$b%c"),
    ('""', ""),
    ("12345678901234567890", 12345678901234567890),
    ("-5.5", -5.5),
    ("null", None),
    ("true", True),
])
def test_quoted_strings_and_primitives_decode_as_the_engine_reads_them(text: str, value: object) -> None:
    assert one(text) == value


def test_a_heredoc_keeps_its_final_newline_and_no_backslash_escape() -> None:
    assert one("<<EOT\nline1 $${x} \\n raw\n  two\nEOT") == "line1 ${x} \\n raw\n  two\n"


def test_an_indented_heredoc_loses_its_smallest_indent_and_keeps_blank_lines() -> None:
    # Terraform 1.11: "a\n\n  b\n  \n" (a whitespace-only line is kept as it is)
    assert one("<<-EOT\n    a\n\n      b\n  \n    EOT") == "a\n\n  b\n  \n"


def test_an_empty_heredoc_is_the_empty_string() -> None:
    assert one("<<EOT\nEOT") == ""


def test_collections_decode_keys_and_values() -> None:
    assert one('["x", 1, true, null, {k = "v", "quoted key" = 2, "$${k}" = "%%{w}"}]') == [
        "x", 1, True, None, {"k": "v", "quoted key": 2, "${k}": "%{w}"}]


@pytest.mark.parametrize("text", ['"x ${var.y} z"', "var.x", 'upper("x")', '"a%{if true}b%{endif}"',
                                  r'"bad \q escape"', "<<EOT\n${x}\nEOT"])
def test_a_template_reference_or_call_is_an_expression_not_a_value(text: str) -> None:
    value = one(text)
    assert isinstance(value, Expression)
    assert has_expression([{"k": value}])


def test_a_literal_dollar_brace_from_an_escape_is_no_expression() -> None:
    value = one('"$${x}"')
    assert value == "${x}" and not isinstance(value, Expression)


def test_private_use_characters_in_a_value_read_back_as_written_beside_an_escape() -> None:
    # the escapes are handed to python-hcl2 as private-use characters the text does not hold
    assert parse_values('a = "\ue000\ue001"\nb = "$${x}"\n', "t.tfvars") == {"a": "\ue000\ue001", "b": "${x}"}


def test_a_quoted_string_that_starts_like_a_heredoc_is_text() -> None:
    assert parse_values('a = "<<"\nb = "<<EOT"\n', "t.tfvars") == {"a": "<<", "b": "<<EOT"}
