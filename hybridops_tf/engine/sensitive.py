"""Sensitive values masked in `show -json` documents of a state or a plan (docs/contract.md: Inputs).

Why: `hyops plan` keeps a readable plan.json in the run folder, and a plan document holds
every value in the clear, with separate `*_sensitive` trees saying which are secret. This
walks those trees and writes "<redacted>" in place of each secret value, in a copy.
Pure; state.py parses, this only masks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.redact import REDACTED
from hybridops_tf.engine.jsonshape import as_dict, as_list
from hybridops_tf.engine.state import unwrap_output_change, walk_modules


def _has_true(tree: Any) -> bool:
    if tree is True:
        return True
    if isinstance(tree, Mapping):
        return any(_has_true(v) for v in tree.values())
    if isinstance(tree, list):
        return any(_has_true(v) for v in tree)
    return False


def _mask(value: Any, tree: Any) -> Any:
    """Return `value` with every leaf the sensitivity `tree` marks `true` replaced.

    The tree mirrors the value (objects by key, lists by index). Where the shapes disagree
    and the tree still marks something, the whole value goes: a leak costs more than a
    redacted harmless value.
    """
    if tree is True:
        return REDACTED
    if isinstance(tree, Mapping) and tree:
        if not isinstance(value, dict):
            return REDACTED if value is not None and _has_true(tree) else value
        for key, sub in tree.items():
            if key in value:
                value[key] = _mask(value[key], sub)
        return value
    if isinstance(tree, list) and tree:
        if not isinstance(value, list):
            return REDACTED if value is not None and _has_true(tree) else value
        for i, sub in enumerate(tree[: len(value)]):
            value[i] = _mask(value[i], sub)
        return value
    return value


def _redact_outputs(outputs: Any) -> None:
    for out in as_dict(outputs).values():
        if isinstance(out, dict) and out.get("sensitive") is True and "value" in out:
            out["value"] = REDACTED


def _redact_values(values: Any) -> None:
    """A values representation: outputs plus every module's resources."""
    if not isinstance(values, dict):
        return
    _redact_outputs(values.get("outputs"))
    root = values.get("root_module")
    if isinstance(root, dict):
        for module in walk_modules(root):
            for res in as_list(module.get("resources")):
                if isinstance(res, dict) and "values" in res:
                    res["values"] = _mask(res["values"], res.get("sensitive_values"))


def _redact_change(change: Any) -> None:
    """A change representation: before/after masked by before_sensitive/after_sensitive."""
    if not isinstance(change, dict):
        return
    for side in ("before", "after"):
        if side in change:
            change[side] = _mask(change[side], change.get(f"{side}_sensitive"))


def _redact_configuration(module: Any, variables: Any) -> None:
    """Sensitive variable defaults and values, and sensitive outputs' constant expressions."""
    for cfg_module in _config_modules(module):
        is_root = cfg_module is module
        for name, var in as_dict(cfg_module.get("variables")).items():
            if isinstance(var, dict) and var.get("sensitive") is True:
                if "default" in var:
                    var["default"] = REDACTED
                given = as_dict(variables).get(name) if is_root else None
                if isinstance(given, dict) and "value" in given:
                    given["value"] = REDACTED
        for out in as_dict(cfg_module.get("outputs")).values():
            expr = as_dict(out).get("expression") if as_dict(out).get("sensitive") is True else None
            if isinstance(expr, dict) and "constant_value" in expr:
                expr["constant_value"] = REDACTED


def _config_modules(root: Any) -> Iterator[dict[str, Any]]:
    stack = [root] if isinstance(root, dict) else []
    while stack:
        module = stack.pop()
        yield module
        for call in as_dict(module.get("module_calls")).values():
            child = as_dict(call).get("module")
            if isinstance(child, dict):
                stack.append(child)


def redact_sensitive(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a `show -json` state or plan with every sensitive value "<redacted>".

    Covers what the engine marks: `sensitive_values` beside resource `values` (state,
    prior_state, planned_values), `before_sensitive`/`after_sensitive` of resource changes,
    drift and output changes, `sensitive: true` outputs, and variables declared sensitive.
    The input is left untouched.
    """
    copy: dict[str, Any] = numbers.loads(numbers.dumps(doc))
    _redact_values(copy.get("values"))
    _redact_values(copy.get("planned_values"))
    prior = copy.get("prior_state")
    if isinstance(prior, dict):
        _redact_values(prior.get("values"))
    for key in ("resource_changes", "resource_drift"):
        for rc in as_list(copy.get(key)):
            if isinstance(rc, dict):
                _redact_change(rc.get("change"))
    for oc in as_dict(copy.get("output_changes")).values():
        _redact_change(unwrap_output_change(oc))
    config = as_dict(copy.get("configuration"))
    _redact_configuration(config.get("root_module"), copy.get("variables"))
    return copy
