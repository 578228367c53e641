"""A stream hyops does not fully know: ignored and counted, never a crash or a refusal.

Engines grow their `-json` UI without a version bump (Terraform 1.14's actions, 1.15's
`ui: "1.3"`). Here the engine under test is wrapped so that its `apply` first prints a message
type no engine ships and a known message with fields nobody documents: the apply still settles
`ok` with its object, and the run folder counts what was ignored (`stream.unknown.json`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from tests.integration.hyops_cli import Hyops

FUTURE_LINES = [
    {"@level": "info", "@message": "Projecting...", "@module": "terraform.ui", "@timestamp": "t",
     "type": "hologram_start", "hook": {"resource": {"addr": "sim_network.this"}}},
    {"@level": "info", "@message": "Terraform says hello", "@module": "terraform.ui", "@timestamp": "t",
     "type": "log", "mood": "cheerful"},
]

WRAPPER = """#!{python}
import os
import sys

engine = {engine!r}
args = sys.argv[1:]
if "apply" in args[:2] and "-json" in args:
    for line in {lines!r}:
        sys.stdout.write(line + "\\n")
    sys.stdout.flush()
os.execv(engine, [engine, *args])
"""


def test_an_engine_speaking_beyond_the_vocabulary_settles_ok_and_the_run_folder_counts_it(
    tmp_path: Path, engine_path: str, runtime_root: Path, sim_root: Path, module_copy: Callable[[str], Path]
) -> None:
    wrapper = tmp_path / "bin" / "terraform"
    wrapper.parent.mkdir()
    wrapper.write_text(WRAPPER.format(python=sys.executable, engine=engine_path,
                                      lines=[json.dumps(line) for line in FUTURE_LINES]))
    wrapper.chmod(0o755)
    hyops = Hyops(tmp_path, runtime_root, str(wrapper), sim_root, {})
    module_copy("network")

    result = hyops("apply", "modules/network")

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    record = hyops.record("network")
    assert record is not None and record["status"] == "ok"
    counted = [json.loads(p.read_text()) for p in (runtime_root / "runs" / "network").glob("*/stream.unknown.json")]
    assert counted == [{"unknown_types": {"hologram_start": 1}, "unknown_fields": {"log.mood": 1}}]
