"""Replace secret values before anything is shown or written (docs/contract.md: Inputs).

Sensitive inputs reach the engine only through its var file on a pipe; every copy that can end up
in a file, a log or a terminal (meta.json argv, resolved.inputs.yml, rerun.inputs.yml, the engine's
event lines in events.jsonl) goes through these helpers first, so "<redacted>" is the one spelling
readers and tests look for. A variable declared `ephemeral = true` is withheld the same way, as
"<ephemeral>" (sensitive and ephemeral at once: "<ephemeral>", the stricter word: no run keeps it).
Imports nothing heavy: the event relay, a process of its own, loads it for the first line that
mentions a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

REDACTED = "<redacted>"
EPHEMERAL = "<ephemeral>"
PLACEHOLDERS = frozenset({REDACTED, EPHEMERAL})  # what a stored file holds instead of a value


def is_placeholder(value: object) -> bool:
    """Whether a stored value is "<redacted>" or "<ephemeral>" rather than a value. Any value may
    be asked about: a list, map or object input is no placeholder (and unhashable, so never `in
    PLACEHOLDERS` itself)."""
    return isinstance(value, str) and value in PLACEHOLDERS

# What events.jsonl holds instead of a line that mentions a sensitive output but cannot be
# parsed (and so redacted): a valid message of a type no engine sends.
WITHHELD_LINE = ('{"type":"hyops_withheld","@message":"an engine line that mentions a sensitive '
                 'value could not be parsed for redaction and was not written"}')


def redact_event_line(line: str) -> str:
    """The engine line as events.jsonl may hold it: sensitive output values blanked.

    Terraform 1.0's `outputs` message carries sensitive values in the clear (OpenTofu omits
    them). Every other line is kept byte for byte; only lines that mention a sensitive
    output are parsed at all, so the cost on ordinary lines is one substring test.
    """
    if '"sensitive":true' not in line.replace(" ", ""):
        return line
    from hybridops_tf.base import numbers

    try:
        doc = numbers.loads(line)
    except (ValueError, RecursionError):  # truncated or absurdly deep: cannot redact, so withhold
        return WITHHELD_LINE
    outputs = doc.get("outputs") if isinstance(doc, dict) else None
    if not isinstance(outputs, dict):
        return line
    changed = False
    for out in outputs.values():
        if isinstance(out, dict) and out.get("sensitive") is True and "value" in out:
            out["value"] = REDACTED
            changed = True
    return numbers.dumps(doc, separators=(",", ":")) if changed else line


# hyops' own option and the engine's passthrough flag; Go's flag package accepts either dash.
_VAR_FLAGS = frozenset({"--var", "-var"})


def placeholder(name: str, sensitive_names: Collection[str],
                ephemeral_names: Collection[str] = ()) -> str | None:
    """What is stored instead of the value of `name`: EPHEMERAL, REDACTED, or None (its value)."""
    if name in ephemeral_names:
        return EPHEMERAL
    return REDACTED if name in sensitive_names else None


def redact_mapping(values: Mapping[str, Any], sensitive_names: Collection[str],
                   ephemeral_names: Collection[str] = ()) -> dict[str, Any]:
    """Copy `values`, each sensitive value as REDACTED and each ephemeral one as EPHEMERAL."""
    return {name: placeholder(name, sensitive_names, ephemeral_names) or value for name, value in values.items()}


def redact_argv(argv: Sequence[str], sensitive_names: Collection[str],
                ephemeral_names: Collection[str] = ()) -> list[str]:
    """Copy argv with the VALUE of `--var NAME=VALUE` withheld for sensitive and ephemeral names.

    Handles `--var NAME=VALUE`, `--var=NAME=VALUE` and the engine's `-var` forms after `--`,
    so meta.json can keep the exact command line without ever holding a secret.
    """
    return _redact_vars(argv, lambda name: placeholder(name, sensitive_names, ephemeral_names))


def redact_every_var(argv: Sequence[str]) -> list[str]:
    """Copy argv with the value of every `--var NAME=VALUE` redacted (the forms redact_argv
    reads), for a command that does not know which inputs are secret (reconcile)."""
    return _redact_vars(argv, lambda _name: REDACTED)


def _redact_vars(argv: Sequence[str], secret: Callable[[str], str | None]) -> list[str]:
    redacted: list[str] = []
    value_follows = False
    for arg in argv:
        if value_follows:
            redacted.append(_redact_assignment(arg, secret))
            value_follows = False
        elif arg in _VAR_FLAGS:
            redacted.append(arg)
            value_follows = True
        else:
            flag, eq, rest = arg.partition("=")
            if eq and flag in _VAR_FLAGS:
                redacted.append(f"{flag}={_redact_assignment(rest, secret)}")
            else:
                redacted.append(arg)
    return redacted


def _redact_assignment(text: str, secret: Callable[[str], str | None]) -> str:
    name, eq, _value = text.partition("=")
    shown = secret(name.strip()) if eq else None
    return f"{name}={shown}" if shown is not None else text
