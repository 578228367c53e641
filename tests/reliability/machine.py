"""Capabilities a reliability test needs from the machine: missing ones FAIL, loudly.

CI runs as root on Linux with chattr, mount, tmpfs and mount namespaces. A test that
cannot set up its fault must not pass by doing nothing, and must not skip: it fails with
what was missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def require(condition: bool, what: str) -> None:
    """A missing capability fails the test with a clear message: never a silent skip."""
    if not condition:
        pytest.fail(f"reliability test needs {what}; this machine cannot provide it "
                    "(CI runs as root on Linux with chattr, mount and tmpfs)", pytrace=False)


def require_root() -> None:
    require(os.geteuid() == 0, "root (uid 0)")


def require_tool(name: str) -> str:
    found = shutil.which(name)
    require(found is not None, f"the `{name}` command on PATH")
    assert found is not None
    return found


def run_checked(argv: list[str], what: str) -> None:
    """Run a set-up command (mount, chattr...); failure is a loud test failure."""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    require(proc.returncode == 0, f"{what} (`{' '.join(argv)}` failed: {proc.stderr.strip()})")
