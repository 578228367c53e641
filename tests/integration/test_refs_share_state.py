"""Two refs on one module directory and workspace keep one engine state, on the real engine.

Without the guard (operation/places.py), `apply --ref b` of a directory applied as ref a
replaced a's network by b's in the shared local state; a's record still said `ok` with the
deleted network's id, and reconcile's advice (`hyops apply --ref a`) would have replaced b's
in turn. A second ref there is now refused before anything runs, unless it keeps a
workspace of its own or the first ref's record claims nothing.
"""

from __future__ import annotations

import pytest

from tests.integration.helpers import copy_module
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration


@pytest.fixture
def net(hyops: Hyops) -> str:
    """modules/net (the example network module), applied once as ref `a` named `alpha`."""
    copy_module("network", hyops.workdir / "modules" / "net")
    first = hyops("apply", "modules/net", "--ref", "a", "--var", "name=alpha")
    assert first.returncode == 0, first.stderr
    return "modules/net"


def _networks(hyops: Hyops) -> list[str]:
    return sorted(o["name"] for o in hyops.sim_objects() if o["type"] == "sim_network")


def test_a_second_ref_on_an_applied_directory_is_refused_and_the_first_record_stays_true(
    hyops: Hyops, net: str
) -> None:
    before = hyops.record("a")

    second = hyops("apply", net, "--ref", "b", "--var", "name=beta")

    assert second.returncode == 2, second.stderr
    assert "module a's" in second.stderr and "--ref a" in second.stderr and "nothing was run" in second.stderr
    assert hyops.record("b") is None
    assert hyops.record("a") == before
    assert _networks(hyops) == ["alpha"]  # the provider was never asked to replace it
    reconcile = hyops("reconcile", net, "--ref", "a")
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr


def test_a_destroy_under_another_ref_is_refused_and_destroys_nothing(hyops: Hyops, net: str) -> None:
    refused = hyops("destroy", net, "--ref", "c", "--auto-approve")

    assert refused.returncode == 2, refused.stderr
    assert "--ref a" in refused.stderr
    assert _networks(hyops) == ["alpha"]
    assert hyops.record("c") is None


def test_a_second_ref_in_a_workspace_of_its_own_keeps_its_own_state(hyops: Hyops, net: str) -> None:
    second = hyops("apply", net, "--ref", "b", "--workspace", "bee", "--var", "name=beta")

    assert second.returncode == 0, second.stderr
    assert _networks(hyops) == ["alpha", "beta"]
    assert hyops.record("a")["status"] == "ok"


def test_a_directory_whose_record_claims_nothing_may_be_applied_under_another_ref(hyops: Hyops, net: str) -> None:
    destroyed = hyops("destroy", net, "--ref", "a", "--auto-approve")
    assert destroyed.returncode == 0, destroyed.stderr

    second = hyops("apply", net, "--ref", "b", "--var", "name=beta")

    assert second.returncode == 0, second.stderr
    assert _networks(hyops) == ["beta"]
    again = hyops("apply", net, "--ref", "a")  # now a would share b's state
    assert again.returncode == 2, again.stderr
    assert "module b's" in again.stderr
