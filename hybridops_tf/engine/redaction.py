"""The one spelling of a hidden value, and the redaction of one engine event line (docs/contract.md: Inputs).

In the engine layer because the event relay (relay.py, a process of its own) redacts every
line before it reaches events.jsonl, and sensitive.py masks `show -json` documents: both
know only the engine's JSON shapes. hybridops_tf.redact builds the core's redactions on
these. Kept small: the relay imports it for the first line that mentions a secret.
"""

from __future__ import annotations

REDACTED = "<redacted>"
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
    import json

    try:
        doc = json.loads(line)
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
    return json.dumps(doc, separators=(",", ":")) if changed else line
