"""A plan as an engineer reads it: per resource its action and the attributes that change.

Why this exists: `hyops plan` used to print only counts, and "1 to add, 1 to destroy" hides a
replace. This turns a `show -json` plan document (the run folder's redacted plan.json) into
plain ASCII lines: `+ create`, `~ update in place`, `-/+` / `+/-` replace (destroy first or
create first), `- delete`, `<= read`; for updates and replaces each changed attribute as
`old -> new`, `(sensitive)` where the document marks a value sensitive, `(known after apply)`
where `after_unknown` does, and `# forces replacement` on the paths in `replace_paths`.
Moves (`moved` blocks), imports (`import` blocks) and forgets (`removed` with destroy = false)
get their own lines: they change no remote object, yet the record follows them. A value marked
sensitive is never formatted, whichever document is given. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.engine.jsonshape import as_dict
from hybridops_tf.engine.state import unwrap_output_change

SENSITIVE = "(sensitive)"
UNKNOWN = "(known after apply)"
FORCES = "# forces replacement"

_HEADS: dict[tuple[str, ...], tuple[str, str]] = {
    ("create",): ("+", "will be created"),
    ("update",): ("~", "will be updated in place"),
    ("delete", "create"): ("-/+", "will be replaced (destroy, then create)"),
    ("create", "delete"): ("+/-", "will be replaced (create before destroy)"),
    ("delete",): ("-", "will be destroyed"),
    ("read",): ("<=", "will be read during apply"),
    # `lifecycle { destroy = false }` on a replaced object (Terraform 1.16 writes create then
    # forget, OpenTofu 1.12 forget then create): the old object is released, never destroyed
    ("create", "forget"): ("+/!", "will be replaced; the old object is no longer managed, not destroyed"),
    ("forget", "create"): ("!/+", "will be replaced; the old object is no longer managed, not destroyed"),
}

_REASONS = {
    "replace_because_tainted": "it is tainted",
    "replace_by_request": "-replace asked for it",
    "replace_because_cannot_update": "an attribute cannot be updated in place",
    "delete_because_no_resource_config": "it is no longer in the configuration",
    "delete_because_no_module": "its module is no longer in the configuration",
    "delete_because_wrong_repetition": "its repetition (count/for_each) changed",
    "delete_because_count_index": "its count index is out of range",
    "delete_because_each_key": "its for_each key is gone",
    "read_because_config_unknown": "its configuration depends on values known after apply",
    "read_because_dependency_pending": "a resource it depends on has changes pending",
}


def _sub(tree: Any, key: str | int) -> Any:
    """The part of a sensitivity/unknown tree below `key` (True stays True)."""
    if tree is True:
        return True
    if isinstance(tree, Mapping) and isinstance(key, str):
        return tree.get(key)
    if isinstance(tree, list) and isinstance(key, int) and 0 <= key < len(tree):
        return tree[key]
    return None


def _marks(tree: Any) -> bool:
    if tree is True:
        return True
    if isinstance(tree, Mapping):
        return any(_marks(v) for v in tree.values())
    if isinstance(tree, list):
        return any(_marks(v) for v in tree)
    return False


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def path_text(steps: Any) -> str:
    """A `replace_paths` entry (["tags", "env"] or ["disk", 0]) in the renderer's spelling."""
    out = ""
    for step in steps if isinstance(steps, list) else []:
        out = _join(out, step if isinstance(step, (str, int)) and not isinstance(step, bool) else str(step))
    return out


def format_value(value: Any, sensitive: Any = None, unknown: Any = None) -> str:
    """One value on one line (JSON spelling, ASCII), with sensitive/unknown parts replaced."""
    if sensitive is True:
        return SENSITIVE
    if unknown is True:
        return UNKNOWN
    if isinstance(value, Mapping):
        keys = sorted(set(value) | {k for k, v in as_dict(unknown).items() if v is True})
        return "{" + ", ".join(
            f"{json.dumps(k)}: {format_value(value.get(k), _sub(sensitive, k), _sub(unknown, k))}" for k in keys
        ) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(
            format_value(v, _sub(sensitive, i), _sub(unknown, i)) for i, v in enumerate(value)
        ) + "]"
    if value is None and _marks(sensitive):
        return SENSITIVE
    return numbers.dumps(value)


def _diff(path: str, before: Any, after: Any, bsens: Any, asens: Any, unknown: Any,
          out: list[tuple[str, str, str]]) -> None:
    """Append (path, old, new) for every leaf that differs between before and after."""
    if unknown is True:
        out.append((path, format_value(before, bsens), UNKNOWN))
        return
    if bsens is True or asens is True:
        if before != after or (bsens is True) != (asens is True):
            out.append((path, format_value(before, bsens), format_value(after, asens)))
        return
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        keys = set(before) | set(after) | {k for k, v in as_dict(unknown).items() if _marks(v)}
        for key in sorted(keys):
            _diff(_join(path, key), before.get(key), after.get(key), _sub(bsens, key), _sub(asens, key),
                  _sub(unknown, key), out)
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i in range(len(before)):
            _diff(_join(path, i), before[i], after[i], _sub(bsens, i), _sub(asens, i), _sub(unknown, i), out)
        return
    if before != after or _marks(unknown):
        out.append((path, format_value(before, bsens), format_value(after, asens, unknown)))


def _created(after: Any, asens: Any, unknown: Any) -> list[str]:
    lines = []
    keys = set(as_dict(after)) | {k for k, v in as_dict(unknown).items() if _marks(v)}
    for key in sorted(keys):
        value = as_dict(after).get(key)
        if value is None and not _marks(_sub(unknown, key)) and not _marks(_sub(asens, key)):
            continue  # the engine leaves unset attributes null; it does not show them either
        lines.append(f"      {key}: {format_value(value, _sub(asens, key), _sub(unknown, key))}")
    return lines


def _changed(change: Mapping[str, Any], replacing: bool) -> list[str]:
    diffs: list[tuple[str, str, str]] = []
    _diff("", change.get("before"), change.get("after"), change.get("before_sensitive"),
          change.get("after_sensitive"), change.get("after_unknown"), diffs)
    forcing = [path_text(p) for p in change.get("replace_paths") or [] if isinstance(p, list)] if replacing else []
    lines = []
    shown: set[str] = set()
    for path, old, new in diffs:
        forced = any(path == f or path.startswith(f + ".") or path.startswith(f + "[") for f in forcing if f)
        shown.update(f for f in forcing if forced and (path == f or path.startswith(f)))
        lines.append(f"      {path}: {old} -> {new}" + (f"  {FORCES}" if forced else ""))
    for f in forcing:
        if f and f not in shown:
            lines.append(f"      {f}: {FORCES}")
    if not lines and (_marks(change.get("before_sensitive")) or _marks(change.get("after_sensitive"))):
        lines.append(f"      (the change is in attributes shown as {SENSITIVE})")
    return lines


MOVED = "will be moved (the object is kept as it is)"
FORGOTTEN = "will no longer be managed; the object is not destroyed"
IMPORTED = "will be imported"


def _importing(change: Mapping[str, Any]) -> str | None:
    """The id an `import` block adopts with this change (Terraform >= 1.5, OpenTofu)."""
    importing = change.get("importing")
    if not isinstance(importing, Mapping):
        return None
    ident = importing.get("id")
    return str(ident) if isinstance(ident, (str, int)) and not isinstance(ident, bool) else "(by identity)"


def _moved_from(rc: Mapping[str, Any]) -> str | None:
    prev = rc.get("previous_address")
    return str(prev) if prev and prev != rc.get("address") else None


def render_resource_change(rc: Mapping[str, Any]) -> list[str]:
    """Lines for one entry of `resource_changes`: the change, and the object's move, import or
    release by the engine (which touch no remote object); none for a plain no-op."""
    change = as_dict(rc.get("change"))
    actions = tuple(a for a in change.get("actions") or [] if isinstance(a, str))
    address = str(rc.get("address", "?"))
    moved_from, importing = _moved_from(rc), _importing(change)
    if actions == ("forget",):
        return [f"  ! {address} {FORGOTTEN}"]
    head = _HEADS.get(actions)
    if head is None:  # a no-op: only its move or import is news
        lines = [f"  > {moved_from} -> {address} {MOVED}"] if moved_from else []
        if importing is not None:
            lines.append(f"  <= {address} {IMPORTED} (id {importing})")
        return lines
    symbol, verb = head
    if rc.get("deposed"):
        address += f" (deposed object {rc['deposed']})"
    if moved_from:
        address += f" (moved from {moved_from})"
    if importing is not None:
        address += f" (imported from id {importing})"
    reason = _REASONS.get(str(rc.get("action_reason", "")))
    lines = [f"  {symbol} {address} {verb}" + (f": {reason}" if reason else "")]
    if actions == ("create",):
        lines += _created(change.get("after"), change.get("after_sensitive"), change.get("after_unknown"))
    elif actions in (("update",), ("delete", "create"), ("create", "delete")):
        lines += _changed(change, replacing=actions != ("update",))
    return lines


def render_output_changes(doc: Mapping[str, Any]) -> list[str]:
    lines = []
    for name, oc in sorted(as_dict(doc.get("output_changes")).items()):
        change = as_dict(unwrap_output_change(oc))
        actions = tuple(change.get("actions") or [])
        if actions in ((), ("no-op",)):
            continue
        sens = True if change.get("sensitive") is True else None
        bsens = sens or change.get("before_sensitive")
        asens = sens or change.get("after_sensitive")
        unknown = change.get("after_unknown")
        if actions == ("create",):
            lines.append(f"  + output.{name}: {format_value(change.get('after'), asens, unknown)}")
        elif actions == ("delete",):
            lines.append(f"  - output.{name}")
        else:
            diffs: list[tuple[str, str, str]] = []
            _diff("", change.get("before"), change.get("after"), bsens, asens, unknown, diffs)
            if diffs:
                old, new = format_value(change.get("before"), bsens), format_value(change.get("after"), asens, unknown)
                lines.append(f"  ~ output.{name}: {old} -> {new}")
    return lines


def render_plan(doc: Mapping[str, Any]) -> list[str]:
    """The changes of a `show -json` plan, resources then outputs; ["No changes."] if none."""
    lines: list[str] = []
    for rc in doc.get("resource_changes") or []:
        if isinstance(rc, Mapping):
            lines += render_resource_change(rc)
    outputs = render_output_changes(doc)
    if outputs:
        lines += ["Changes to outputs:", *outputs]
    return lines or ["No changes."]


_MD_ACTIONS: dict[tuple[str, ...], str] = {
    ("create",): "create",
    ("update",): "update in place",
    ("delete", "create"): "replace (destroy, then create)",
    ("create", "delete"): "replace (create before destroy)",
    ("delete",): "delete",
    ("read",): "read",
    ("create", "forget"): "replace (the old object is no longer managed, not destroyed)",
    ("forget", "create"): "replace (the old object is no longer managed, not destroyed)",
}


def _md_cell(text: str) -> str:
    """One table cell: pipes escaped, on one line (a PR comment renders it as typed)."""
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def changed_paths(rc: Mapping[str, Any]) -> list[str]:
    """The attributes one resource change sets or changes (names only, never values)."""
    change = as_dict(rc.get("change"))
    actions = tuple(a for a in change.get("actions") or [] if isinstance(a, str))
    if actions == ("create",):
        after, unknown, asens = change.get("after"), change.get("after_unknown"), change.get("after_sensitive")
        keys = set(as_dict(after)) | {k for k, v in as_dict(unknown).items() if _marks(v)}
        return sorted(k for k in keys if as_dict(after).get(k) is not None or _marks(_sub(unknown, k))
                      or _marks(_sub(asens, k)))
    if actions in (("update",), ("delete", "create"), ("create", "delete")):
        diffs: list[tuple[str, str, str]] = []
        _diff("", change.get("before"), change.get("after"), change.get("before_sensitive"),
              change.get("after_sensitive"), change.get("after_unknown"), diffs)
        forcing = {path_text(p) for p in change.get("replace_paths") or [] if isinstance(p, list)}
        return [f"{path} (forces replacement)" if path in forcing else path for path, _, _ in diffs]
    return []


def render_markdown(doc: Mapping[str, Any], title: str, summary: str) -> list[str]:
    """A markdown table of the plan (resource, action, changed attributes), then the counts:
    for a PR comment or $GITHUB_STEP_SUMMARY. Attribute names only: no value is printed."""
    rows = []
    for rc in doc.get("resource_changes") or []:
        if not isinstance(rc, Mapping):
            continue
        change = as_dict(rc.get("change"))
        actions = tuple(a for a in change.get("actions") or [] if isinstance(a, str))
        action = _MD_ACTIONS.get(actions)
        extra = [f"moved from `{_md_cell(m)}`" for m in [_moved_from(rc)] if m]
        extra += [f"import (id `{_md_cell(i)}`)" for i in [_importing(change)] if i is not None]
        if rc.get("deposed") and action is not None:
            action += f" (deposed object {_md_cell(str(rc['deposed']))})"
        if actions == ("forget",):
            action, extra = "no longer managed (the object is not destroyed)", []
        elif action is None:
            if not extra:
                continue
            action = "no change to the object"
        action = "; ".join([action, *extra])
        attrs = ", ".join(f"`{_md_cell(p)}`" for p in changed_paths(rc))
        rows.append(f"| `{_md_cell(str(rc.get('address', '?')))}` | {action} | {attrs} |")
    lines = [f"### {_md_cell(title)}", ""]
    if rows:
        lines += ["| resource | action | changed attributes |", "|---|---|---|", *rows]
    else:
        lines.append("No changes.")
    return [*lines, "", f"**{_md_cell(summary)}**"]


def render_markdown_failure(title: str, message: str) -> list[str]:
    """A plan that failed, for the same PR comment or job summary: the engine's own words in a
    code block (diagnostics name what is wrong; they show no value hyops redacts)."""
    fence = "`" * 3
    return [f"### {_md_cell(title)}", "", "**The plan failed:**", "", fence, message.replace(fence, "'" * 3), fence]
