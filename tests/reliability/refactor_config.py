"""A sim module's configuration as data, the .tf text made from it, and random refactors of it.

Used by the refactor walk (refactor_walk.py, test_refactor_sequences.py). The configuration is
one root module (`modules/m`): a network, resource blocks of `sim_vm` (on the network) and
`sim_health_check` (targeting the network), each a single instance, a `count` or a `for_each`,
and optionally one call of a local child module (`./child`) holding more such blocks. Every
instance has an object `name` unique in the sequence and kept for the object's life (renames,
moves and conversions keep it; a new instance gets a new one), so two live objects with one
name in the sim cloud are two objects for one instance: a duplicate.

A refactor changes this model and says what else the step needs: engine commands run by hand
(`state mv`) and engine arguments for the apply (`-replace=ADDR`). `moved`, `removed` and
`import` blocks stay in the configuration until an apply has provably carried them out
(`Config.settled()`), as a person deletes them once applied.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SIM_REQUIREMENT = """terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}
"""
CHILD_FOLDER = "child"
SIZES = ("small", "medium", "large")
CIDRS = ("10.0.0.0/16", "10.1.0.0/16", "10.2.0.0/16")
Key = int | str | None
_ADDRESS_TYPE = re.compile(r"(sim_[a-z_]+)\.")


@dataclass
class Block:
    """One resource block: `type`, HCL `name`, `mode` (single, count, for_each) and, per
    instance key, the object name (count keys are 0..n-1 in order; single has key None)."""

    type: str
    name: str
    mode: str
    names: dict[Key, str]
    size: str = "small"  # sim_vm only: changed in place
    cidr: str = CIDRS[0]  # sim_network only: changed in place
    uid: int = 0  # the block's identity in the model, kept through renames and conversions
    cbd: bool = False  # lifecycle { create_before_destroy = true }: a replace makes the new object first

    def address(self, key: Key, prefix: str = "") -> str:
        base = f"{prefix}{self.type}.{self.name}"
        if self.mode == "single":
            return base
        return f"{base}[{key}]" if self.mode == "count" else f'{base}["{key}"]'

    def instances(self, prefix: str = "") -> dict[str, str]:
        """{address: object name} of every instance."""
        return {self.address(k, prefix): n for k, n in self.names.items()}


@dataclass
class Config:
    network: Block
    blocks: list[Block] = field(default_factory=list)
    child_call: str | None = None
    child_blocks: list[Block] = field(default_factory=list)
    moved: list[tuple[str, str, str]] = field(default_factory=list)  # (scope root|child, from, to)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (scope, from)
    imports: list[tuple[str, str]] = field(default_factory=list)  # (to, id), root only
    counter: int = 0

    # ----- names -----
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    @property
    def child_prefix(self) -> str:
        return f"module.{self.child_call}." if self.child_call else ""

    def instances(self) -> dict[str, str]:
        """{address: object name} of every instance the configuration declares."""
        found = self.network.instances()
        for b in self.blocks:
            found.update(b.instances())
        for b in self.child_blocks:
            found.update(b.instances(self.child_prefix))
        return found

    def scoped_blocks(self) -> list[tuple[str, Block]]:
        """(scope, block) of every resource block but the network."""
        return [("root", b) for b in self.blocks] + [("child", b) for b in self.child_blocks]

    def prefix(self, scope: str) -> str:
        return self.child_prefix if scope == "child" else ""

    def pending(self) -> bool:
        """Refactor blocks not yet proven carried out."""
        return bool(self.moved or self.removed or self.imports)

    def settled(self) -> None:
        """An apply carried every block out: delete them, as a person does."""
        self.moved.clear()
        self.removed.clear()
        self.imports.clear()

    # ----- text -----
    def root_tf(self) -> str:
        net = self.network
        parts = [SIM_REQUIREMENT, 'provider "sim" {}\n',
                 f'resource "sim_network" "{net.name}" {{\n  name = {_q(net.names[None])}\n'
                 f"  cidr = {_q(net.cidr)}\n}}\n"]
        network_id = f"sim_network.{net.name}.id"
        parts += [_resource(b, network_id) for b in self.blocks]
        if self.child_call:
            parts.append(f'module "{self.child_call}" {{\n  source     = "./{CHILD_FOLDER}"\n'
                         f"  network_id = {network_id}\n}}\n")
        parts += [_moved(f, t) for s, f, t in self.moved if s == "root"]
        parts += [_removed(f) for s, f in self.removed if s == "root"]
        parts += [f"import {{\n  to = {to}\n  id = {_q(ident)}\n}}\n" for to, ident in self.imports]
        return "\n".join(parts)

    def child_tf(self) -> str | None:
        if not self.child_call:
            return None
        parts = [SIM_REQUIREMENT, 'variable "network_id" {\n  type = string\n}\n']
        parts += [_resource(b, "var.network_id") for b in self.child_blocks]
        parts += [_moved(f, t) for s, f, t in self.moved if s == "child"]
        parts += [_removed(f) for s, f in self.removed if s == "child"]
        return "\n".join(parts)

    def describe(self) -> str:
        """One line: the blocks and their instances, for the step list."""
        def one(b: Block, prefix: str = "") -> str:
            keys = "" if b.mode == "single" else f" {b.mode}={list(b.names)}"
            return f"{prefix}{b.type}.{b.name}{keys}{' (create_before_destroy)' if b.cbd else ''}"
        shown = [one(self.network)] + [one(b) for b in self.blocks]
        shown += [one(b, self.child_prefix) for b in self.child_blocks]
        return "; ".join(shown)


def _q(text: str) -> str:
    return json.dumps(text)


def _resource(b: Block, network_id: str) -> str:
    lines = [f'resource "{b.type}" "{b.name}" {{']
    if b.mode == "count":
        lines.append(f"  count = {len(b.names)}")
        listed = ", ".join(_q(b.names[i]) for i in range(len(b.names)))
        # with no instance the name is never evaluated; [][count.index] would not validate
        lines.append(f"  name  = [{listed}][count.index]" if b.names else '  name  = "none"')
    elif b.mode == "for_each":
        listed = ", ".join(f"{k} = {_q(n)}" for k, n in b.names.items())
        lines.append(f"  for_each = {{ {listed} }}")
        lines.append("  name     = each.value")
    else:
        lines.append(f"  name = {_q(b.names[None])}")
    if b.type == "sim_vm":
        lines += [f"  network_id = {network_id}", f"  size       = {_q(b.size)}"]
    else:
        lines.append(f"  target_id = {network_id}")
    if b.cbd:
        lines.append("  lifecycle {\n    create_before_destroy = true\n  }")
    return "\n".join(lines) + "\n}\n"


def _moved(src: str, dst: str) -> str:
    return f"moved {{\n  from = {src}\n  to   = {dst}\n}}\n"


def _removed(src: str) -> str:
    return f"removed {{\n  from = {src}\n  lifecycle {{\n    destroy = false\n  }}\n}}\n"


# ----- the first configuration ---------------------------------------------------------------


def _new_block(cfg: Config, rng: random.Random, kind: str | None = None) -> Block:
    kind = kind or rng.choice(("sim_vm", "sim_vm", "sim_health_check"))
    mode = rng.choice(("single", "count", "for_each"))
    b = Block(kind, cfg.fresh("r"), mode, {}, size=rng.choice(SIZES), uid=cfg.counter, cbd=rng.random() < 0.3)
    if mode == "single":
        b.names[None] = cfg.fresh("o")
    elif mode == "count":
        b.names = {i: cfg.fresh("o") for i in range(rng.randint(1, 3))}
    else:
        b.names = {cfg.fresh("k"): cfg.fresh("o") for _ in range(rng.randint(1, 3))}
    return b


def initial(rng: random.Random) -> Config:
    cfg = Config(network=Block("sim_network", "net", "single", {}))
    cfg.network.names[None] = cfg.fresh("o")
    cfg.network.uid = cfg.counter
    cfg.blocks = [_new_block(cfg, rng, "sim_vm")] + [_new_block(cfg, rng) for _ in range(rng.randint(0, 1))]
    if rng.random() < 0.6:
        cfg.child_call = cfg.fresh("c")
        cfg.child_blocks = [_new_block(cfg, rng) for _ in range(rng.randint(1, 2))]
    return cfg


# ----- refactors -------------------------------------------------------------------------------


@dataclass
class Step:
    """What one refactor did: its kind, a readable line, engine commands to run by hand
    (argv after the engine binary) and engine arguments for the apply."""

    kind: str
    text: str
    engine_commands: list[list[str]] = field(default_factory=list)
    apply_args: list[str] = field(default_factory=list)
    touches: list[tuple[str, str]] = field(default_factory=list)  # (type, op) the apply will call


@dataclass(frozen=True)
class Facts:
    """What a person sees before refactoring: the record's live entries ({address: id}) and
    released objects ([(address, id)]), and the live sim objects ({id: object})."""

    managed: Mapping[str, str]
    released: list[tuple[str, str]]
    live: Mapping[str, Mapping[str, Any]]


Refactor = Callable[[Config, random.Random, Facts], Step | None]


def _pick_block(cfg: Config, rng: random.Random, with_network: bool = False) -> tuple[str, Block] | None:
    choices = cfg.scoped_blocks() + ([("root", cfg.network)] if with_network else [])
    return rng.choice(choices) if choices else None


def _resource_address(scope: str, b: Block, cfg: Config) -> str:
    return f"{cfg.prefix(scope)}{b.type}.{b.name}"


def address_type(address: str) -> str:
    """`module.c.sim_vm.r1["k"]` -> `sim_vm`; `*` -> `*`."""
    found = _ADDRESS_TYPE.findall(address)
    return found[-1] if found else address


def _of_resource(address: str, resource: str) -> bool:
    """`address` is an instance of `resource` (sim_vm.a, sim_vm.a[0], sim_vm.a["k"])."""
    return address == resource or (address.startswith(resource) and address[len(resource)] == "[")


def rename_moved(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """Rename a resource block and say so with a `moved` block (in the block's own module)."""
    picked = _pick_block(cfg, rng, with_network=True)
    if picked is None:
        return None
    scope, b = picked
    old = f"{b.type}.{b.name}"
    b.name = cfg.fresh("r")
    cfg.moved.append((scope, old, f"{b.type}.{b.name}"))
    where = cfg.prefix(scope)
    return Step("moved", f"rename {where}{old} -> {where}{b.type}.{b.name} with a moved block")


def rename_state_mv(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """Rename a resource block and `terraform state mv` it by hand (no moved block)."""
    held = [(s, b) for s, b in cfg.scoped_blocks() + [("root", cfg.network)]
            if any(_of_resource(a, _resource_address(s, b, cfg)) for a in facts.managed)]
    if not held:
        return None
    scope, b = rng.choice(held)
    old = _resource_address(scope, b, cfg)
    b.name = cfg.fresh("r")
    new = _resource_address(scope, b, cfg)
    return Step("state_mv", f"rename {old} -> {new} with `state mv` by hand",
                engine_commands=[["state", "mv", old, new]])


def remove_block(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """Delete a resource block and release its objects with `removed { destroy = false }`."""
    picked = _pick_block(cfg, rng)
    if picked is None:
        return None
    scope, b = picked
    (cfg.blocks if scope == "root" else cfg.child_blocks).remove(b)
    cfg.removed.append((scope, f"{b.type}.{b.name}"))
    return Step("removed", f"release {cfg.prefix(scope)}{b.type}.{b.name} ({len(b.names)} instance(s)) "
                "with a removed block, destroy = false")


def readopt(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """Adopt a released object back: a new root block with its name, and an `import` block."""
    candidates = [(a, i) for a, i in facts.released if i in facts.live and i not in facts.managed.values()]
    if not candidates:
        return None
    address, ident = rng.choice(candidates)
    obj = facts.live[ident]
    b = Block(obj["type"], cfg.fresh("r"), "single", {None: obj["name"]},
              size=(obj.get("attributes") or {}).get("size") or SIZES[0], uid=cfg.counter)
    cfg.blocks.append(b)
    cfg.imports.append((b.address(None), ident))
    return Step("import", f"adopt released {address} ({ident}) back as {b.address(None)} with an import block",
                touches=[(b.type, "read")])


def change_instances(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """Change a count, or add/remove a for_each key."""
    picked = [(s, b) for s, b in cfg.scoped_blocks() if b.mode != "single"]
    if not picked:
        return None
    scope, b = rng.choice(picked)
    where = f"{cfg.prefix(scope)}{b.type}.{b.name}"
    if b.mode == "count":
        before = len(b.names)
        after = rng.choice([n for n in range(4) if n != before])
        b.names = {i: b.names.get(i) or cfg.fresh("o") for i in range(after)}
        return Step("count", f"count of {where}: {before} -> {after}",
                    touches=[(b.type, "create" if after > before else "delete")])
    if b.names and rng.random() < 0.5:
        key = rng.choice(list(b.names))
        del b.names[key]
        return Step("for_each", f"for_each of {where}: remove key {key}", touches=[(b.type, "delete")])
    key = cfg.fresh("k")
    b.names[key] = cfg.fresh("o")
    return Step("for_each", f"for_each of {where}: add key {key}", touches=[(b.type, "create")])


def convert(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """single / count / for_each into another mode, every instance moved with a moved block."""
    picked = _pick_block(cfg, rng)
    if picked is None:
        return None
    scope, b = picked
    target = rng.choice([m for m in ("single", "count", "for_each") if m != b.mode
                         and not (m == "single" and len(b.names) != 1)])
    old = copy.deepcopy(b)
    names = list(b.names.values())
    if target == "single":
        b.names = {None: names[0]}
    elif target == "count":
        b.names = dict(enumerate(names))
    else:
        b.names = {cfg.fresh("k"): n for n in names}
    b.mode = target
    for old_key, new_key in zip(old.names, b.names, strict=True):
        cfg.moved.append((scope, old.address(old_key), b.address(new_key)))
    return Step("convert", f"{cfg.prefix(scope)}{b.type}.{b.name}: {old.mode} -> {target} "
                f"({len(names)} instance(s) moved with moved blocks)")


def replace(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """`-replace=ADDR` of an instance the state holds."""
    declared = cfg.instances()
    held = sorted(a for a in facts.managed if a in declared)
    if not held:
        return None
    address = rng.choice(held)
    kind = address_type(address)
    return Step("replace", f"apply -replace={address}", apply_args=["--", f"-replace={address}"],
                touches=[(kind, "create"), (kind, "delete")])


def rename_module_call(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """Rename the child module call with `moved { from = module.a to = module.b }`."""
    if not cfg.child_call:
        return None
    old = cfg.child_call
    cfg.child_call = cfg.fresh("c")
    cfg.moved.append(("root", f"module.{old}", f"module.{cfg.child_call}"))
    return Step("module_moved", f"rename module.{old} -> module.{cfg.child_call} with a moved block")


def change_attribute(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """A plain change: a vm's size or the network's cidr (in place), or a block's
    create_before_destroy (nothing to call: the next replace of it makes the new object first)."""
    blocks = cfg.scoped_blocks()
    if blocks and rng.random() < 0.2:
        scope, b = rng.choice(blocks)
        b.cbd = not b.cbd
        return Step("attribute", f"create_before_destroy of {cfg.prefix(scope)}{b.type}.{b.name} -> "
                    f"{str(b.cbd).lower()}")
    vms = [(s, b) for s, b in cfg.scoped_blocks() if b.type == "sim_vm" and b.names]
    if vms and rng.random() < 0.7:
        scope, b = rng.choice(vms)
        b.size = rng.choice([s for s in SIZES if s != b.size])
        return Step("attribute", f"size of {cfg.prefix(scope)}{b.type}.{b.name} -> {b.size}",
                    touches=[("sim_vm", "update")])
    cfg.network.cidr = rng.choice([c for c in CIDRS if c != cfg.network.cidr])
    return Step("attribute", f"cidr of sim_network.{cfg.network.name} -> {cfg.network.cidr}",
                touches=[("sim_network", "update")])


def add_block(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    """A new resource block, in the root or the child module."""
    scope = "child" if cfg.child_call and rng.random() < 0.4 else "root"
    b = _new_block(cfg, rng)
    (cfg.blocks if scope == "root" else cfg.child_blocks).append(b)
    return Step("add", f"add {cfg.prefix(scope)}{b.type}.{b.name} ({b.mode}, {len(b.names)} instance(s))",
                touches=[(b.type, "create")])


def reapply(cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    return Step("reapply", "apply again, configuration unchanged")


# (refactor, weight); a refactor that does not fit the configuration returns None and another is drawn
REFACTORS: list[tuple[Refactor, float]] = [
    (rename_moved, 2.0), (rename_state_mv, 1.5), (remove_block, 1.5), (readopt, 3.0),
    (change_instances, 2.0), (convert, 1.5), (replace, 1.5), (rename_module_call, 1.5),
    (change_attribute, 1.5), (add_block, 1.0), (reapply, 0.3),
]


# refactors that call no provider by themselves; in half their steps a partner refactor that
# does (on other blocks) goes in the same apply, so a fault can meet the refactor there
STRUCTURAL = frozenset({"moved", "state_mv", "removed", "import", "convert", "module_moved"})
PARTNERS: list[tuple[Refactor, float]] = [
    (change_instances, 2.0), (add_block, 1.0), (change_attribute, 1.0), (replace, 1.0),
]


def _fingerprint(cfg: Config) -> dict[int, str]:
    return {b.uid: repr(b) for b in [cfg.network, *cfg.blocks, *cfg.child_blocks]}


def _changed(before: dict[int, str], after: dict[int, str]) -> set[int]:
    return {uid for uid in before.keys() | after.keys() if before.get(uid) != after.get(uid)}


def _draw(table: list[tuple[Refactor, float]], cfg: Config, rng: random.Random, facts: Facts) -> Step | None:
    funcs, weights = zip(*table, strict=True)
    return rng.choices(funcs, weights)[0](cfg, rng, facts)


def refactor(cfg: Config, rng: random.Random, facts: Facts) -> Step:
    """One random refactor that fits (with, for a structural one, sometimes a partner on
    other blocks). With refactor blocks still pending (no apply has carried them out yet),
    only an apply of the configuration as it is."""
    if cfg.pending():
        return Step("reapply", "apply again, configuration unchanged")
    before = _fingerprint(cfg)
    step = None
    while step is None:
        step = _draw(REFACTORS, cfg, rng, facts)
    if step.kind not in STRUCTURAL or rng.random() < 0.5:
        return step
    first = _fingerprint(cfg)
    touched = _changed(before, first)
    for _ in range(10):
        trial = copy.deepcopy(cfg)
        partner = _draw(PARTNERS, trial, rng, facts)
        if partner is None or _changed(first, _fingerprint(trial)) & touched:
            continue
        for name in cfg.__dataclass_fields__:
            setattr(cfg, name, getattr(trial, name))
        return Step(step.kind, f"{step.text} + {partner.text}", step.engine_commands,
                    step.apply_args + partner.apply_args, step.touches + partner.touches)
    return step


# ----- faults ----------------------------------------------------------------------------------

CREATE_MODES = ("fail_before_create", "fail_after_create", "lose_response")


def faults(cfg: Config, rng: random.Random, touches: list[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """Sim fault rules (each `times: 1`) for the step's apply: none in about 40% of the steps,
    else one, mostly aimed at a call the step makes (`touches`), else at any type, mostly at
    a create (it may then fire in the step's apply or never). In one step of five with a
    fault, a second one: a create fault on another type, which may fire only in an apply the
    advice runs (when the first fault stopped the step's apply before that create)."""
    if rng.random() < 0.4:
        return []
    types = sorted({"sim_network", *(b.type for _, b in cfg.scoped_blocks())})
    if touches and rng.random() < 0.8:
        kind, op = rng.choice(touches)
        mode = {"create": rng.choice(CREATE_MODES), "delete": "fail_delete"}.get(op, "fail")  # update, read
        rules = [{"type": kind, "op": op, "mode": mode, "times": 1}]
    else:
        kind = rng.choice(types)
        roll = rng.random()
        op, mode = (("create", rng.choice(CREATE_MODES)) if roll < 0.75 else
                    ("delete", "fail_delete") if roll < 0.9 else ("update", "fail"))
        rules = [{"type": kind, "op": op, "mode": mode, "times": 1}]
    others = [t for t in types if t != kind]
    if others and rng.random() < 0.2:
        rules.append({"type": rng.choice(others), "op": "create", "mode": rng.choice(CREATE_MODES), "times": 1})
    return rules
