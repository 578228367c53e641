"""Where everything lives under a runtime root (docs/contract.md: Files under the runtime root),
spelt in this one place. Record keys become folder names through address.module_id.

    state/modules/<module_id>/latest.json, .lock   the record and its lock (the local store)
    state/modules/<module_id>/drift_seen.json      the drift reconcile last saw (runtime/drift_seen.py)
    state/modules/<module_id>/outside_seen.json    objects reconcile saw another writer make (runtime/outside_seen.py)
    runs/<module_id>/<run_id>/                     one command's run folder
    config/modules/<module_id>/rerun.inputs.yml    the inputs a rerun needs (no secrets)
    config/digest.key                              the key of the inputs digests
    cache/engines.json, cache/hcl/, cache/init/,   what hyops remembers to be fast
    cache/places/
    stacks/<stack>/latest.json                     a stack's last run report
"""

from __future__ import annotations

from pathlib import Path

from hybridops_tf.record.address import module_id

RECORD_FILE = "latest.json"
RERUN_INPUTS_FILE = "rerun.inputs.yml"
DRIFT_SEEN_FILE = "drift_seen.json"
OUTSIDE_SEEN_FILE = "outside_seen.json"


def records_dir(root: Path) -> Path:
    return root / "state" / "modules"


def record_dir(root: Path, key: str) -> Path:
    return records_dir(root) / module_id(key)


def drift_seen(root: Path, key: str) -> Path:
    return record_dir(root, key) / DRIFT_SEEN_FILE


def outside_seen(root: Path, key: str) -> Path:
    return record_dir(root, key) / OUTSIDE_SEEN_FILE


def run_dir(root: Path, key: str, run_id: str) -> Path:
    return root / "runs" / module_id(key) / run_id


def rerun_inputs_dir(root: Path) -> Path:
    return root / "config" / "modules"


def rerun_inputs(root: Path, key: str) -> Path:
    return rerun_inputs_dir(root) / module_id(key) / RERUN_INPUTS_FILE


def digest_key(root: Path) -> Path:
    return root / "config" / "digest.key"


def engine_cache(root: Path) -> Path:
    return root / "cache" / "engines.json"


def hcl_cache(root: Path) -> Path:
    return root / "cache" / "hcl"


def init_cache(root: Path) -> Path:
    return root / "cache" / "init"


def plugin_cache(root: Path) -> Path:
    """The engine's provider cache for every module of the root (engine/plugin_cache.py)."""
    return root / "cache" / "plugins"


def places_cache(root: Path) -> Path:
    return root / "cache" / "places"


def stacks_dir(root: Path) -> Path:
    return root / "stacks"


def stack_report(root: Path, stack_name: str) -> Path:
    return stacks_dir(root) / stack_name / RECORD_FILE


def holds_records(root: Path) -> bool:
    """Whether `root` looks like a runtime root with records or stack reports in it."""
    return records_dir(root).parent.is_dir() or stacks_dir(root).is_dir()
