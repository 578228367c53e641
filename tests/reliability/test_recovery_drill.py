"""The recovery drill: every create fault the sim has, on every member of the demo stack, then
reconcile's advice followed as a pipeline would, counting the faults that needed a person.

One scenario per (member type, fault mode): `lose_response` (the object is made, its answer
lost), `fail_before_create` (nothing is made, the call fails) and `fail_after_create` (made,
then the call fails: the engine keeps it tainted), each `times: 1` on the create of one of
the four members' types. The project's lookups file (the repository's hyops.lookups.yml,
`hyops sim lookup` for the four sim types) sits beside the runtime root, as it does for the
example modules. Per scenario: `stack apply` goes red; then, at most MAX_ROUNDS rounds,
`hyops reconcile --stack --json` and its advice, literally: every step of every finding, and
for a choice the pipeline's own (`stack apply --resume`, else apply, else `--write`); a
finding whose only way forward is a person's decision (an `--import` of an id someone must
find, a `--forget-orphan` after someone checked) counts the scenario as needing a person,
and the drill then plays that person (the live object named as planned, else forget) so the
scenario still ends; last, `stack apply --resume` until every member is ok.

Checked: every scenario converges (all members ok, reconcile consistent) with one live object
per name (never a duplicate); and no lost or failed create needs a person. Figures for
docs/reliability.md (figures.py, kind `drill`): per scenario whether a suspect orphan was
listed (without lookups, that is a person's job) and whether a person was needed.

A `reliability` test (`make reliability`; ~10 minutes on 2 cores): `make test` leaves it out.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.helpers import REPO_ROOT, copy_module
from tests.integration.hyops_cli import Hyops
from tests.reliability.figures import DRILL, note
from tests.stackfiles import write_stack

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

MAX_ROUNDS = 4
STACK = "stack/stack.yml"
MEMBERS = {"sim_network": "demo/network", "sim_vm": "demo/vm", "sim_config": "demo/config",
           "sim_health_check": "demo/health"}
NAMES = {"sim_network": "demo-net", "sim_vm": "demo-vm", "sim_config": "demo-config",
         "sim_health_check": "demo-health"}
MODES = ("lose_response", "fail_before_create", "fail_after_create")
CHOICES = ("hyops stack apply", "hyops apply", "hyops reconcile")  # the pipeline's pick, in order


def needs_person(finding: dict[str, Any]) -> bool:
    """Only a person can take this finding further: which object is the one, or that none is."""
    commands = [a["command"] for a in finding.get("alternatives", [])] + list(finding.get("next_actions", []))
    return any("--import" in c or "--forget-orphan" in c for c in commands)


class Drill:
    def __init__(self, hyops: Hyops) -> None:
        self.h = hyops
        self.commands: Counter[str] = Counter()
        self.person = False
        self.orphan = False

    def run(self, *args: str) -> Any:
        out = self.h(*args)
        assert "Traceback" not in out.stderr, out.stderr
        return out

    def follow(self, command: str) -> None:
        argv = shlex.split(command)
        assert argv[0] == "hyops", f"advice {command!r} is not a hyops command"
        flags = [a for a in argv if a in ("--write", "--import", "--forget-orphan", "--resume")]
        self.commands[" ".join([argv[1] if argv[1] != "stack" else " ".join(argv[1:3]), *flags])] += 1
        self.run(*argv[1:])

    def play_person(self, finding: dict[str, Any]) -> None:
        """What a person does: find the object named as planned among the live ones no record
        holds, import it; none: forget the orphan."""
        self.person = True
        address = finding["addresses"][0]
        name = (finding.get("planned_attributes") or {}).get("name")
        held = {e.get("id") for ref in MEMBERS.values()
                for e in ((self.h.record(ref) or {}).get("resources") or {}).values()}
        live = [o["id"] for o in self.h.sim_objects()
                if o["type"] == address.split(".")[0] and o["name"] == name and o["id"] not in held]
        commands = [a["command"] for a in finding["alternatives"]]
        pick = next(c for c in commands if ("--import" in c) == bool(live))
        self.follow(pick.replace("<id>", live[0]) if live and "<id>" in pick else pick)

    def settle(self) -> int:
        for rounds in range(MAX_ROUNDS + 1):
            doc = json.loads(self.run("reconcile", "--stack", STACK, "--json").stdout)
            if doc["consistent"]:
                return rounds
            seen: set[str] = set()
            for finding in [f for m in doc["modules"] for f in m["findings"]]:
                if needs_person(finding):
                    self.play_person(finding)
                    continue
                for step in finding["next_actions"]:
                    if step not in seen:
                        seen.add(step)
                        self.follow(step)
                choices = [a["command"] for a in finding["alternatives"]]
                pick = next((c for verb in CHOICES for c in choices if c.startswith(verb)), None)
                if pick is not None and pick not in seen:
                    seen.add(pick)
                    self.follow(pick)
        raise AssertionError(f"not consistent after {MAX_ROUNDS} rounds of advice")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("type_name", list(MEMBERS))
def test_a_lost_or_failed_create_on_any_member_recovers_from_the_advice_with_no_person(
    hyops: Hyops, tmp_path: Path, faults_file: Any, type_name: str, mode: str
) -> None:
    stack = tmp_path / "stack"
    for name in ("network", "vm", "config", "health"):
        copy_module(name, stack / name)
    write_stack(stack)
    shutil.copy(REPO_ROOT / "hyops.lookups.yml", hyops.runtime_root.parent / "hyops.lookups.yml")
    faults = faults_file([{"type": type_name, "op": "create", "mode": mode, "times": 1}])
    assert hyops("stack", "apply", STACK).returncode == 1
    faults.write_text(yaml.safe_dump({"rules": []}))  # the cause is fixed; the pipeline is re-run
    drill = Drill(hyops)
    drill.orphan = any((hyops.record(ref) or {}).get("suspect_orphans") for ref in MEMBERS.values())

    rounds = drill.settle()
    resumed = drill.run("stack", "apply", STACK, "--resume")

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads(drill.run("reconcile", "--stack", STACK, "--json").stdout)["consistent"]
    names = Counter((o["type"], o["name"]) for o in hyops.sim_objects())
    assert sorted(names) == sorted(NAMES.items())
    assert set(names.values()) == {1}, f"a duplicate: {names}"
    note(DRILL, type=type_name, mode=mode, orphan=drill.orphan, person=drill.person, rounds=rounds,
         commands=dict(drill.commands))
    assert not drill.person, f"{type_name} {mode} needed a person"
