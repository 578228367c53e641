"""No dead ends: random refactors and faults, then reconcile's advice, always end consistent.

Each sequence (refactor_walk.py) drives the real `hyops` on a modern engine (>= 1.7, for
`removed` blocks; skipped with a message where there is none) and the sim provider through
random refactors (moved, removed, import blocks, `state mv` by hand, count and for_each
changes and conversions, `-replace`, a child module call renamed with `moved`, a plain
attribute or create_before_destroy change), each applied with injected faults (`times: 1`),
follows reconcile's advice literally, and asserts: never a duplicate, never an under-claiming
record, consistent within MAX_ROUNDS rounds of advice after every step, and only released
objects left after a destroy. Each sequence a walk found broken is kept as a scripted test at
the end of this file (integration tests: they run in `make test`).

Both random tests are `reliability` tests (`make reliability`, not `make test`): one sequence
takes 25-60 s on 2 busy cores, so even the smoke (3 sequences) is over a minute.

    make reliability                                  # HYOPS_REFACTOR_SEQUENCES (default 200)
    HYOPS_REFACTOR_SEQUENCES=20 .venv/bin/python -m pytest -m reliability \\
        tests/reliability/test_refactor_sequences.py -k never_dead_end   # fewer
    .venv/bin/python -m pytest -m reliability tests/reliability/test_refactor_sequences.py -k smoke
    HYOPS_REFACTOR_SEED=1017 .venv/bin/python -m pytest -m reliability \\
        tests/reliability/test_refactor_sequences.py -k never_dead_end   # replay one sequence

Environment: HYOPS_REFACTOR_SEQUENCES (the full test, default 200), HYOPS_REFACTOR_SMOKE (the
smoke test, default 3), HYOPS_REFACTOR_STEPS (refactors per sequence after the first apply,
default 5), HYOPS_REFACTOR_BASE_SEED (default 1000: sequence i has seed BASE + i; the smoke's
are 1, 2, 3), HYOPS_REFACTOR_SEED (run that one seed only), HYOPS_REFACTOR_WORKERS (sequences
run at once, default 2),
HYOPS_REFACTOR_KEEP=1 (keep every sequence's folder and transcript, seq-SEED.txt, not only the
failing ones'). Every sequence notes its figures (figures.py) for docs/reliability.md; a
failure prints each failing seed, its steps, what broke and a replay line.
"""

from __future__ import annotations

import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.integration.modern import engine_version
from tests.reliability.figures import REFACTOR_RUN, REFACTOR_SEQUENCE, note
from tests.reliability.refactor_config import Block, Config
from tests.reliability.refactor_walk import MAX_ROUNDS, Outcome, Walk

pytestmark = pytest.mark.integration

CATEGORIES = ("stuck", "duplicated", "under-claiming", "diverged", "other")

SEQUENCES = int(os.environ.get("HYOPS_REFACTOR_SEQUENCES", "200"))
SMOKE = int(os.environ.get("HYOPS_REFACTOR_SMOKE", "3"))
STEPS = int(os.environ.get("HYOPS_REFACTOR_STEPS", "5"))
BASE_SEED = int(os.environ.get("HYOPS_REFACTOR_BASE_SEED", "1000"))
SMOKE_SEED = 1  # the smoke's seeds are 1.., apart from the full run's
WORKERS = max(1, int(os.environ.get("HYOPS_REFACTOR_WORKERS", "2")))
KEEP = bool(os.environ.get("HYOPS_REFACTOR_KEEP"))  # keep every sequence's folder and transcript
ONLY = os.environ.get("HYOPS_REFACTOR_SEED", "").strip()
TEST_FILE = "tests/reliability/test_refactor_sequences.py"


def _seeds(first: int, count: int) -> list[int]:
    return [int(ONLY)] if ONLY else [first + i for i in range(count)]


def _replay(seed: int, test: str) -> str:
    return (f"HYOPS_REFACTOR_SEED={seed} HYOPS_REFACTOR_STEPS={STEPS} .venv/bin/python -m pytest "
            f"-m reliability {TEST_FILE} -k {test}")


def _one(base: Path, engine: str, label: str, seed: int, variant: str, test: str) -> Outcome:
    folder = base / f"seq-{seed}"
    outcome = Walk(folder, engine, seed, STEPS).run()
    note(REFACTOR_SEQUENCE, variant=variant, seed=seed, engine=label,
         steps=len(outcome.kinds), seconds=round(outcome.seconds, 1),
         **{c.replace("-", "_"): c in outcome.failures for c in CATEGORIES},
         kinds=outcome.kinds, rounds=outcome.rounds, commands=dict(outcome.commands),
         faults_armed=outcome.faults_armed, faults_fired=outcome.faults_fired,
         max_rounds=MAX_ROUNDS)
    if outcome.ok and not KEEP:
        shutil.rmtree(folder, ignore_errors=True)  # 200 sequences' run folders add up
    if not outcome.ok or KEEP:
        (base / f"seq-{seed}.txt").write_text(outcome.explain(_replay(seed, test)) + "\n"
                                              + "\n".join(outcome.transcript) + "\n")
    return outcome


def _run_sequences(tmp_path: Path, engine: str, seeds: list[int], variant: str, test: str) -> None:
    started = time.monotonic()
    label = f"{Path(engine).name} {engine_version(engine)}"
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(seeds))) as pool:
        outcomes = list(pool.map(lambda s: _one(tmp_path, engine, label, s, variant, test), seeds))
    note(REFACTOR_RUN, variant=variant, sequences=len(outcomes), workers=min(WORKERS, len(seeds)),
         seconds=round(time.monotonic() - started, 1))
    failed = [o for o in outcomes if not o.ok]
    counts = {c: sum(c in o.failures for o in outcomes) for c in CATEGORIES}
    summary = (f"{len(outcomes)} sequences of {STEPS} refactors in {time.monotonic() - started:.0f}s: "
               + ", ".join(f"{n} {c}" for c, n in counts.items()))
    print(summary)
    assert not failed, summary + f" (full transcripts in {tmp_path}/seq-SEED.txt)\n\n" + "\n\n".join(
        o.explain(_replay(o.seed, test)) for o in failed[:5])


@pytest.mark.reliability
def test_random_refactor_sequences_never_dead_end(modern_engine: str, tmp_path: Path) -> None:
    """HYOPS_REFACTOR_SEQUENCES sequences (default 200): none stuck, duplicated or under-claiming."""
    _run_sequences(tmp_path, modern_engine, _seeds(BASE_SEED, SEQUENCES), "full",
                   "test_random_refactor_sequences_never_dead_end")


@pytest.mark.reliability
def test_refactor_sequences_smoke(modern_engine: str, tmp_path: Path) -> None:
    """HYOPS_REFACTOR_SMOKE sequences (default 3), the same checks: a quick look."""
    _run_sequences(tmp_path, modern_engine, _seeds(SMOKE_SEED, SMOKE), "smoke",
                   "test_refactor_sequences_smoke")


# ----- sequences walks found broken: each scripted (the same advice-following and checks) -------


def _scripted(tmp_path: Path, engine: str, cfg: Config) -> Walk:
    """A walk over `cfg` (no random refactors), applied once without a fault."""
    walk = Walk(tmp_path / "scripted", engine, seed=0, steps=0)
    walk.cfg = cfg
    walk.write_config()
    walk.arm([])
    assert walk.apply_step("first apply", []), walk.out.explain("(scripted)")
    return walk


def test_a_lost_create_of_a_create_before_destroy_replace_is_never_left_unclaimed(
        modern_engine: str, tmp_path: Path) -> None:
    """Sequence: net + sim_vm.a (create_before_destroy); apply; then `apply -- -replace=sim_vm.a`
    with {sim_vm create lose_response times 1}; follow reconcile's advice; destroy.

    Was: the orphan's address is one the state still holds (the old object), so the advice was
    `sim ls` then `--forget-orphan`, the delete only in prose: followed, it left the new object
    live and unclaimed. Now `hyops sim rm <id>` is the advised delete."""
    cfg = Config(network=Block("sim_network", "net", "single", {None: "net-1"}, uid=1),
                 blocks=[Block("sim_vm", "a", "single", {None: "vm-a"}, uid=2, cbd=True)])
    walk = _scripted(tmp_path, modern_engine, cfg)
    walk.arm([{"type": "sim_vm", "op": "create", "mode": "lose_response", "times": 1}])
    if walk.apply_step("replace", ["--", "-replace=sim_vm.a"]):
        walk.finish()
    assert walk.out.ok, walk.out.explain("(scripted)") + "\n" + "\n".join(walk.out.transcript)
    assert walk.out.commands["sim rm"] == 1, walk.out.commands


def test_a_failed_create_of_a_create_before_destroy_replace_leaves_no_deposed_entry_behind(
        modern_engine: str, tmp_path: Path) -> None:
    """Sequence: net + sim_vm.a (create_before_destroy); apply; then `apply -- -replace=sim_vm.a`
    with {sim_vm create fail_after_create times 1}; follow reconcile's advice; destroy.

    Was: the advised apply deletes the deposed object and the replaced tainted one at once;
    Terraform 1.11 reports one delete complete for the two, so the deposed entry kept its gone
    id in an `ok` record, and the destroy then failed on it (state_missing) for good."""
    cfg = Config(network=Block("sim_network", "net", "single", {None: "net-1"}, uid=1),
                 blocks=[Block("sim_vm", "a", "single", {None: "vm-a"}, uid=2, cbd=True)])
    walk = _scripted(tmp_path, modern_engine, cfg)
    walk.arm([{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}])
    if walk.apply_step("replace", ["--", "-replace=sim_vm.a"]):
        walk.finish()
    assert walk.out.ok, walk.out.explain("(scripted)") + "\n" + "\n".join(walk.out.transcript)


def test_an_import_whose_object_the_same_failed_apply_destroyed_has_a_way_back(
        modern_engine: str, tmp_path: Path) -> None:
    """Sequence: net + sim_vm.a; apply; release sim_vm.a (removed, destroy = false); apply; adopt
    it back as sim_vm.b with an import block and `apply -- -replace=sim_network.net` with
    {sim_network create fail_before_create times 1}; follow reconcile's advice.

    Was: the import block then names a destroyed object, so every plan fails; reconcile advised
    `--write`, which refused round after round, and the record listed the object as released
    ("lives on"). Now a `stale_import` finding names the block to delete."""
    cfg = Config(network=Block("sim_network", "net", "single", {None: "net-1"}, uid=1),
                 blocks=[Block("sim_vm", "a", "single", {None: "vm-a"}, uid=2)])
    walk = _scripted(tmp_path, modern_engine, cfg)
    cfg.blocks, cfg.removed = [], [("root", "sim_vm.a")]
    walk.write_config()
    assert walk.apply_step("release sim_vm.a", []), walk.out.explain("(scripted)")
    released = walk.released(walk.record())
    assert [a for a, _ in released] == ["sim_vm.a"], released
    cfg.removed = []
    cfg.blocks = [Block("sim_vm", "b", "single", {None: "vm-a"}, uid=3)]
    cfg.imports = [("sim_vm.b", released[0][1])]
    walk.write_config()
    walk.arm([{"type": "sim_network", "op": "create", "mode": "fail_before_create", "times": 1}])
    if walk.apply_step("import back + replace the network", ["--", "-replace=sim_network.net"]):
        walk.finish()
    assert walk.out.ok, walk.out.explain("(scripted)") + "\n" + "\n".join(walk.out.transcript)
    assert walk.out.commands["edit: drop import blocks"] >= 1, walk.out.commands
