"""Fixtures of the reliability suite: the real `hyops`, the real engine, the sim cloud.

The engine suites' shared fixtures (tests/conftest.py: engine, runtime root, sim root,
faults file, module copies, scrubbed engine environment, the `pair` module writer) are used
as they are. What this suite adds: a `hyops` bound to the test, cleanup of processes the
test's kills orphaned, the small modules the tests write (modules.py), and VM_PAIR_TF as its
`pair`.
Capability checks live in machine.py: they FAIL, never skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.helpers import VM_PAIR_TF
from tests.integration.hyops_cli import Hyops
from tests.reliability import procs


@pytest.fixture(autouse=True)
def _hermetic_engine_env(hermetic_engine_env: None) -> None:
    """Start every reliability test from a clean engine environment."""


@pytest.fixture
def hyops(tmp_path: Path, engine_path: str, runtime_root: Path, sim_root: Path) -> Iterator[Hyops]:
    """`hyops` for this test; afterwards, processes our kills orphaned are ended by pid."""
    yield Hyops(tmp_path, runtime_root, engine_path, sim_root, {})
    for pid in procs.engine_pids_under(tmp_path) + procs.provider_pids(sim_root):
        procs.kill(pid)


@pytest.fixture
def pair_tf() -> str:
    """This suite's modules/pair (written by the integration `pair` fixture): a network and
    a vm on it, always both (so a kill can split them)."""
    return VM_PAIR_TF
