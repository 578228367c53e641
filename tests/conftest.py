"""Shared by every suite: the composition the `hyops` CLI makes at import, for tests that
call the core directly (Runtime.engine_env, reconcile evidence) without going through it:
the sim's engine environment, and the core's notices on stderr as the CLI writes them."""

from __future__ import annotations

import pytest

from hybridops_tf.base import notices
from hybridops_tf.cli.main import say
from hybridops_tf.runtime import hooks
from hybridops_tf.sim.install import SIM_ENVIRONMENT


@pytest.fixture(autouse=True, scope="session")
def sim_environment_hook() -> None:
    """Sim modules get the provider mirror, as under `hyops` (hybridops_tf.cli.main)."""
    hooks.register(SIM_ENVIRONMENT)


@pytest.fixture(autouse=True, scope="session")
def notices_on_stderr() -> None:
    notices.listen(say)
