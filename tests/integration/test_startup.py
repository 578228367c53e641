"""What `hyops apply` loads before it starts the engine (issue #3's overhead budget), and
what `hyops reconcile` need not load at all (issue #25).

The event parser and the state parser (some 20 classes) are needed only once engine output
arrives; loaded after the spawn, their import overlaps the engine's own start-up.
A probe runs the real CLI on a no-op module with the real engine and notes the loaded
modules at the moment the mutating command is spawned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

# ctypes: only for a read-only engine's parent-death signal; the relay and the relayed
# engine are spawned without code between fork and exec (engine/process.py)
DEFERRED = ("hybridops_tf.engine.events", "hybridops_tf.engine.state", "hcl2", "yaml", "ctypes",
            "hybridops_tf.runtime.run_result")  # result.json's kinds: needed once the engine ran (issue 37)

PROBE = """
import json, sys
{preload}
from hybridops_tf.engine import process

real_spawn = process._spawn
seen = []

def spawn(argv, env, **kwargs):
    if sys.argv[1] in argv and not seen:
        seen.append(sorted(sys.modules))
    return real_spawn(argv, env, **kwargs)

process._spawn = spawn
sys.argv = ["hyops", sys.argv[1], sys.argv[2], "--ref", "probe/noop"]
from hybridops_tf.cli.main import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
sys.stderr.write("PROBE " + json.dumps({{"code": code, "loaded": seen[0] if seen else None,
                                         "at_end": sorted(sys.modules)}}) + "\\n")
"""


def probe(tmp_path: Path, engine_path: str, preload: str = "", command: str = "apply") -> dict:
    module = tmp_path / "noop"
    if not module.exists():  # rewriting it would change its mtime, and so miss the HCL cache
        module.mkdir()
        (module / "main.tf").write_text('output "answer" {\n  value = 42\n}\n')
    env = dict(os.environ, HYOPS_ENGINE=engine_path, HYOPS_RUNTIME_ROOT=str(tmp_path / "rt"))
    result = subprocess.run([sys.executable, "-c", PROBE.format(preload=preload), command, str(module)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("PROBE ")]
    assert lines, result.stderr
    return json.loads(lines[-1][len("PROBE "):])


def test_apply_spawns_the_engine_before_loading_the_event_state_hcl_and_yaml_parsers(
    tmp_path: Path, engine_path: str
) -> None:
    probe(tmp_path, engine_path)  # first run: init and the engine version cache
    report = probe(tmp_path, engine_path)

    assert report["code"] in (0, None)
    assert report["loaded"] is not None, "the apply was never spawned"
    assert [m for m in DEFERRED if m in report["loaded"]] == []


def test_a_plan_spawns_the_engine_before_loading_the_event_parser_and_a_no_op_plan_never_loads_the_rest(
    tmp_path: Path, engine_path: str
) -> None:
    """The event parser comes with the engine's first line; the plan document's redactor and
    the saved-plan code (zipfile) only with a plan that has something to show, or `--out`."""
    probe(tmp_path, engine_path)  # an apply first: init, the engine version cache, no changes left
    report = probe(tmp_path, engine_path, command="plan")

    assert report["code"] in (0, None)
    assert report["loaded"] is not None, "the plan was never spawned"
    after = ("hybridops_tf.engine.events", "hybridops_tf.engine.state", "hybridops_tf.runtime.run_result",
             "hybridops_tf.cli.plan_render")  # the renderer and result.json's kinds: once the engine ran (issue 37)
    assert [m for m in (*after, "hcl2", "yaml") if m in report["loaded"]] == []
    assert [m for m in after if m not in report["at_end"]] == []  # the probe sees what the stream loaded
    never = ("hybridops_tf.engine.sensitive", "hybridops_tf.plan.saved", "zipfile")
    assert [m for m in never if m in report["at_end"]] == []


def test_the_startup_probe_does_see_a_module_loaded_before_the_spawn(tmp_path: Path, engine_path: str) -> None:
    """Control for the test above: the probe is able to fail."""
    report = probe(tmp_path, engine_path, preload="import hybridops_tf.engine.events")

    assert "hybridops_tf.engine.events" in report["loaded"]


RECONCILE_PROBE = """
import json, sys
sys.argv = ["hyops", "reconcile", sys.argv[1], "--ref", "probe/noop", "--json"]
from hybridops_tf.cli.main import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
sys.stderr.write("PROBE " + json.dumps({"code": code, "hcl2": "hcl2" in sys.modules}) + "\\n")
"""


def reconcile_probe(tmp_path: Path, engine_path: str) -> dict:
    env = dict(os.environ, HYOPS_ENGINE=engine_path, HYOPS_RUNTIME_ROOT=str(tmp_path / "rt"))
    result = subprocess.run([sys.executable, "-c", RECONCILE_PROBE, str(tmp_path / "noop")],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("PROBE ")]
    assert lines, result.stderr
    return json.loads(lines[-1][len("PROBE "):])


def test_reconcile_reads_the_variables_an_apply_parsed_from_the_hcl_cache(tmp_path: Path, engine_path: str) -> None:
    """python-hcl2 and lark (~0.3 s, then a parse per module) are not loaded by a reconcile
    of a module whose parse an apply kept; the cache is read, never written (its files stay)."""
    probe(tmp_path, engine_path)  # the apply keeps the module's parse under cache/hcl
    cache = tmp_path / "rt" / "cache" / "hcl"
    kept = {p.name: p.read_bytes() for p in cache.iterdir()}
    assert kept

    report = reconcile_probe(tmp_path, engine_path)

    assert report == {"code": 0, "hcl2": False}
    assert {p.name: p.read_bytes() for p in cache.iterdir()} == kept
    # control: without the cache the variables are parsed, and the probe sees it
    for path in cache.iterdir():
        path.unlink()
    assert reconcile_probe(tmp_path, engine_path) == {"code": 0, "hcl2": True}
    assert list(cache.iterdir()) == []  # a read-only reconcile writes no cache
