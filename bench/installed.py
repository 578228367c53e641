"""hyops as a user installs it, for the benches that compare it with the raw engine: a wheel of
this tree installed into a fresh venv (pip byte-compiles it, and no editable-install finder runs
at every start, as it does in the dev venv)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def installed_python(work: Path, extras: str = "") -> Path | None:
    """The fresh venv's Python with this tree's wheel (and `extras`, e.g. "sim") installed
    under `work`, or None when the registry cannot provide the dependencies."""
    venv = work / "venv"
    pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        subprocess.run([*pip, "wheel", "--no-deps", "-w", str(work / "wheels"), str(REPO)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wheel = next((work / "wheels").glob("hybridops_tf-*.whl"))
        subprocess.run([*pip, "--python", str(venv / "bin" / "python"), "install",
                        f"{wheel}[{extras}]" if extras else str(wheel)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (subprocess.CalledProcessError, StopIteration):
        return None
    return venv / "bin" / "python"
