"""What a hyops command loads: a fresh interpreter runs the real CLI, so nothing a test
imported counts; the modules it holds at the end are the command's import set
(tests/unit/test_import_sets.py, tests/integration/test_import_sets.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROBE = """
import json, sys
{preload}
sys.argv = ["hyops", *sys.argv[1:]]
from hybridops_tf.cli.main import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
sys.stderr.write("PROBE " + json.dumps({{"code": code, "loaded": sorted(sys.modules)}}) + "\\n")
"""


def loaded_by(cwd: Path, argv: list[str], preload: str = "", env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The exit code and the modules loaded by `hyops ARGV` run in a fresh interpreter in cwd."""
    result = subprocess.run([sys.executable, "-c", PROBE.format(preload=preload), *argv], capture_output=True,
                            text=True, env=None if env is None else dict(env), cwd=cwd, timeout=300, check=False,
                            stdin=subprocess.DEVNULL)
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("PROBE ")]
    assert lines, result.stderr
    found: dict[str, Any] = json.loads(lines[-1][len("PROBE "):])
    return found


def among(loaded: list[str], packages: tuple[str, ...]) -> list[str]:
    """The loaded modules that are one of `packages` or inside one."""
    return [m for m in loaded if m in packages or m.startswith(tuple(f"{p}." for p in packages))]
