"""The steps of the drill of other writers (tests/reliability/writers.py runs them): the module
they act on and the seeded generator of sequences. A step is a plain string (see writers.py),
so a sequence reads, replays and shrinks as a list."""

from __future__ import annotations

import random

from tests.integration.helpers import SIM_HEADER

KEYS = ("web", "db")
SIZES = ("small", "large")
FIRST = "hyops apply web small"

# A network and a for_each of vms; the inputs pick the vms and their size (an in-place update).
MODULE_TF = SIM_HEADER + """
variable "vms" {
  type    = set(string)
  default = ["web"]
}
variable "size" {
  type    = string
  default = "small"
}
resource "sim_network" "net" {
  name = "drill-net"
}
resource "sim_vm" "vm" {
  for_each   = var.vms
  name       = "drill-${each.key}"
  size       = var.size
  network_id = sim_network.net.id
}
"""


# ----- generating a sequence ----------------------------------------------------------------------

def _vms(rng: random.Random) -> str:
    return rng.choice(["web", "web,db", "db", "web,db"])


def _step(rng: random.Random) -> str:
    key, other = rng.sample(KEYS, 2)
    size = rng.choice(SIZES)
    choices: list[tuple[int, str]] = [
        (4, f"hyops apply {_vms(rng)} {size}"), (2, f"hyops apply -replace {key}"), (1, "hyops destroy"),
        (1, "hyops plan"), (2, "hyops reconcile --write"), (3, f"follow {rng.randrange(4)}"),
        (2, f"tf apply {_vms(rng)} {size}"), (2, f"tf apply -replace {key}"), (1, f"tf taint {key}"),
        (1, f"tf untaint {key}"), (1, f"tf state rm {key}"), (1, f"tf state mv {key} {other}"),
        (1, f"tf state mv {key} spare"), (3, f"tf push-old {rng.randint(1, 3)}"), (1, f"tf import {key}"),
        (1, "tf destroy"), (1, f"cloud rm {rng.choice([*KEYS, 'net'])}"), (1, f"cloud create {key}"),
    ]
    return rng.choices([s for _, s in choices], weights=[w for w, _ in choices])[0]


def generate(seed: int, low: int = 6, high: int = 12) -> list[str]:
    """The steps of sequence `seed`: FIRST, then `low`..`high` random steps; after another
    writer's step, half the time the next one follows reconcile's advice (as a person would)."""
    rng = random.Random(seed)
    steps = [FIRST]
    for _ in range(rng.randint(low, high)):
        disturbed = steps[-1].split()[0] in ("tf", "cloud")
        steps.append(f"follow {rng.randrange(4)}" if disturbed and rng.random() < 0.5 else _step(rng))
    return steps


def kind(step: str) -> str:
    """A step's kind: its words less its arguments (`tf state mv KEY spare` stays apart)."""
    words = step.split()
    if words[0] == "follow":
        return "follow"
    if words[:3] == ["tf", "state", "mv"]:
        return "tf state mv " + ("undeclared" if words[-1] == "spare" else "declared")
    if words[:2] in (["tf", "state"],):
        return " ".join(words[:3])
    if len(words) > 2 and words[2] == "-replace":
        return " ".join(words[:3])
    return " ".join(words[:2])
