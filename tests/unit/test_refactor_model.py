"""The refactor walk's configuration model (tests/reliability/refactor_config.py) keeps what
the walk's checks rely on: one object name per instance, never reused while the sequence
runs, names kept through renames and conversions, and refactor blocks that name real
addresses. Pure: no engine, no hyops."""

from __future__ import annotations

import random

from tests.reliability.refactor_config import Config, Facts, faults, initial, refactor

SEEDS = range(40)
STEPS = 20


def _facts(cfg: Config) -> Facts:
    """As if every declared instance were applied and nothing released."""
    return Facts({a: f"id-{n}" for a, n in cfg.instances().items()}, [], {})


def test_names_are_unique_per_instance_and_never_reused() -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        cfg = initial(rng)
        seen: dict[str, str] = dict((n, a) for a, n in cfg.instances().items())
        for _ in range(STEPS):
            before = cfg.instances()
            step = refactor(cfg, rng, _facts(cfg))
            after = cfg.instances()
            names = list(after.values())
            assert len(names) == len(set(names)), (seed, step.text, after)
            gone = set(before.values()) - set(names)
            for name in set(names) - set(before.values()):
                assert name not in seen, f"seed {seed}: {step.text} reused the name {name}"
                seen[name] = step.text
            if step.kind in ("moved", "state_mv", "convert", "module_moved") and " + " not in step.text:
                assert not gone, f"seed {seed}: {step.text} lost {gone}"
            cfg.settled()


def _resources(cfg: Config) -> set[str]:
    """Resource addresses (no instance keys) the configuration declares."""
    found = {f"sim_network.{cfg.network.name}"}
    found |= {f"{cfg.prefix(scope)}{b.type}.{b.name}" for scope, b in cfg.scoped_blocks()}
    return found


def _resource_of(address: str) -> str:
    return address.split("[", 1)[0]


def test_blocks_render_and_name_declared_addresses() -> None:
    """moved: from a resource declared before, to one declared now (module calls: the call);
    removed: a resource declared before and no longer; import: a declared single instance."""
    for seed in SEEDS:
        rng = random.Random(seed)
        cfg = initial(rng)
        for _ in range(STEPS):
            calls, before = cfg.child_call, _resources(cfg)
            step = refactor(cfg, rng, _facts(cfg))
            now = _resources(cfg)
            root, child = cfg.root_tf(), cfg.child_tf() or ""
            assert root.count("{") == root.count("}") and child.count("{") == child.count("}")
            for scope, src, dst in cfg.moved:
                if src.startswith("module."):
                    assert (src, dst) == (f"module.{calls}", f"module.{cfg.child_call}"), (seed, step.text)
                    continue
                prefix = cfg.prefix(scope) if step.kind != "module_moved" else f"module.{calls}."
                assert prefix + _resource_of(src) in before, (seed, step.text, src, before)
                assert cfg.prefix(scope) + _resource_of(dst) in now, (seed, step.text, dst, now)
            for scope, src in cfg.removed:
                assert cfg.prefix(scope) + src not in now, (seed, step.text, src)
            for to, _ in cfg.imports:
                assert to in cfg.instances(), (seed, step.text, to)
            for rule in faults(cfg, rng, step.touches):
                assert rule["times"] == 1 and rule["type"].startswith("sim_")
            cfg.settled()

