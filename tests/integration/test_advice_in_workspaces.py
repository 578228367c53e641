"""Every command hyops prints acts on the record it speaks of, in a non-default workspace too
(issue 45, item 1): the tests paste the printed commands as they are and check what they did.

Before, a failed apply in `uat` printed `next: hyops reconcile DIR --ref REF` without
`--workspace uat`: pasted, it checked the default workspace ("consistent", exit 0) over uat's
lost create; and a failed destroy's `last_error` in `qa` advised an `--import` into the default
workspace's state.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hybridops_tf.sim.install import sim_engine_env
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration


def pasted(hyops: Hyops, command: str) -> subprocess.CompletedProcess[str]:
    """Run a printed `hyops ...` command as a person pastes it."""
    words = shlex.split(command)
    assert words[0] == "hyops", command
    return hyops(*words[1:])


def test_a_failed_applys_next_command_reconciles_its_own_workspace(
        hyops: Hyops, pair: Path, faults_file: Callable[..., Path]) -> None:
    assert hyops("apply", "modules/pair", "--auto-approve").returncode == 0  # default: healthy
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])

    failed = hyops("apply", "modules/pair", "--workspace", "uat", "--auto-approve")

    assert failed.returncode == 1, failed.stdout + failed.stderr
    (line,) = [ln for ln in failed.stdout.splitlines() if ln.strip().startswith("next: ")]
    command = line.strip().removeprefix("next: ").split("   (")[0]
    assert not Path(shlex.split(command)[2]).is_absolute()  # repo-relative, as docs/ci.md promises
    report = pasted(hyops, command + " --json")
    assert report.returncode == 3, report.stdout + report.stderr  # uat's lost create, not default's peace
    (module,) = json.loads(report.stdout)["modules"]
    assert "suspect_orphan" in {f["code"] for f in module["findings"]}
    for finding in module["findings"]:
        for action in finding["next_actions"]:
            if action.startswith("hyops ") and " --ref " in action:  # a command on this module
                assert "--workspace uat" in action, action


def test_a_failed_destroys_import_advice_puts_the_object_back_into_its_own_workspace(
        hyops: Hyops, pair: Path) -> None:
    assert hyops("apply", "modules/pair", "--auto-approve").returncode == 0  # default: healthy
    assert hyops("apply", "modules/pair", "--workspace", "qa", "--auto-approve").returncode == 0
    qa = hyops.record("pair@qa")
    assert qa is not None
    net_id = qa["resources"]["sim_network.net"]["id"]
    env = hyops.env(TF_WORKSPACE="qa")
    env.update(sim_engine_env(hyops.runtime_root, env))
    removed = subprocess.run([hyops.engine, "state", "rm", "sim_network.net"], cwd=pair, env=env,
                             capture_output=True, text=True, timeout=300, check=False)
    assert removed.returncode == 0, removed.stderr  # a teammate's `state rm` in qa
    default_before = hyops.record("pair")

    refused = hyops("destroy", "modules/pair", "--workspace", "qa", "--auto-approve")
    assert refused.returncode == 4 and "--workspace qa" in refused.stderr, refused.stderr  # state_missing first
    failed = hyops("destroy", "modules/pair", "--workspace", "qa", "--auto-approve", "--allow-uncertain")

    assert failed.returncode == 1, failed.stdout + failed.stderr
    qa = hyops.record("pair@qa")
    assert qa is not None
    (command,) = re.findall(r"`(hyops reconcile [^`]*--import[^`]*)`", qa["last_error"])
    assert "--workspace qa" in command
    adopted = pasted(hyops, command)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    listed = subprocess.run([hyops.engine, "state", "list"], cwd=pair, env=env, capture_output=True, text=True,
                            timeout=300, check=True)
    assert "sim_network.net" in listed.stdout.split()  # back in qa's state
    assert hyops.record("pair") == default_before  # the default workspace's record was not touched
    assert hyops("destroy", "modules/pair", "--workspace", "qa", "--auto-approve").returncode == 0
    assert net_id not in {o["id"] for o in hyops.sim_objects()}
