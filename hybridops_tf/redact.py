"""Replace secret values before anything is shown or written (docs/contract.md: Inputs).

Sensitive inputs reach the engine only through its var file on a pipe; every copy that can end up
in a file, a log or a terminal (meta.json argv, resolved.inputs.yml, rerun.inputs.yml) goes
through these helpers first, so "<redacted>" is the one spelling readers and tests look for.
That spelling and the redaction of an engine event line live in hybridops_tf.engine.redaction
(the event relay, an engine-layer process, needs them); they are named here too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from hybridops_tf.engine.redaction import REDACTED, redact_event_line

__all__ = [
    "REDACTED",
    "redact_argv",
    "redact_event_line",
    "redact_every_var",
    "redact_mapping",
]

# hyops' own option and the engine's passthrough flag; Go's flag package accepts either dash.
_VAR_FLAGS = frozenset({"--var", "-var"})


def redact_mapping(values: Mapping[str, Any], sensitive_names: Collection[str]) -> dict[str, Any]:
    """Copy `values`, replacing the value of every sensitive name with REDACTED."""
    return {name: REDACTED if name in sensitive_names else value for name, value in values.items()}


def redact_argv(argv: Sequence[str], sensitive_names: Collection[str]) -> list[str]:
    """Copy argv with the VALUE of `--var NAME=VALUE` redacted for sensitive names.

    Handles `--var NAME=VALUE`, `--var=NAME=VALUE` and the engine's `-var` forms after `--`,
    so meta.json can keep the exact command line without ever holding a secret.
    """
    return _redact_vars(argv, lambda name: name in sensitive_names)


def redact_every_var(argv: Sequence[str]) -> list[str]:
    """Copy argv with the value of every `--var NAME=VALUE` redacted (the forms redact_argv
    reads), for a command that does not know which inputs are secret (reconcile)."""
    return _redact_vars(argv, lambda _name: True)


def _redact_vars(argv: Sequence[str], secret: Callable[[str], bool]) -> list[str]:
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


def _redact_assignment(text: str, secret: Callable[[str], bool]) -> str:
    name, eq, _value = text.partition("=")
    if eq and secret(name.strip()):
        return f"{name}={REDACTED}"
    return text
