"""One random walk of refactors and faults over a sim module, following reconcile's advice.

A sequence (seeded, so it can be replayed) starts from a random configuration
(refactor_config.py) and applies it; then, step after step, it makes one random refactor
(a structural one sometimes with a partner change on other blocks), arms at most two sim
fault rules (each `times: 1`, in a new faults file) and runs `hyops apply`. After every apply
it runs `hyops reconcile --json` and, while that is not consistent, does what it says,
literally: every command of every finding's `next_actions`, in order, and one of its
`alternatives` (apply rather than destroy; for a suspect orphan, `--import` or `hyops sim rm`
with the id `hyops sim ls` shows for the object named as planned, else `--forget-orphan`; for a stale
import, first the edit it asks for: the import blocks it names leave the configuration), each command
line split with shlex and run as the user would (the same command twice in one round runs
once), at most MAX_ROUNDS rounds. At the end, `hyops destroy`.

What is checked, after every command (from `hyops sim ls --json` and the record):
- never a duplicate: no two live objects share a name (names are unique per instance by
  construction; while the record names the extra one as deposed or a suspect orphan of its
  type, only until reconcile says consistent), and the record never lists one id at two
  addresses;
- never under-claiming: every live object is in the record's `resources` (with its id, not
  `destroyed`), or `released`, or its type is named by a suspect orphan;
- consistent within MAX_ROUNDS rounds of advice after every step, else the sequence is stuck;
- once an apply carried a step out (or a plan shows nothing left to do), the record is `ok`
  and lists exactly the configuration's instances, each the object of its name ("diverged");
- after the final destroy, only released objects remain, and the record says `destroyed`.
"""

from __future__ import annotations

import json
import random
import shlex
import subprocess
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.integration.hyops_cli import Hyops
from tests.reliability.refactor_config import (
    CHILD_FOLDER,
    Config,
    Facts,
    address_type,
    faults,
    initial,
    refactor,
)

MODULE = "modules/m"
REF = "m"
MAX_ROUNDS = 4  # rounds of advice after a step before the sequence counts as stuck
ENGINE_TIMEOUT = 300


@dataclass
class Outcome:
    """What one sequence did and found."""

    seed: int
    steps: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)  # rounds of advice each step needed
    commands: Counter[str] = field(default_factory=Counter)  # advice commands run, by kind
    failures: dict[str, list[str]] = field(default_factory=dict)  # category -> messages
    transcript: list[str] = field(default_factory=list)
    faults_armed: int = 0
    faults_fired: int = 0
    seconds: float = 0.0

    def fail(self, category: str, message: str) -> None:
        found = self.failures.setdefault(category, [])
        if message not in found:
            found.append(message)

    @property
    def ok(self) -> bool:
        return not self.failures

    def explain(self, replay: str) -> str:
        lines = [f"sequence seed={self.seed}: " + ", ".join(f"{k} ({len(v)})" for k, v in self.failures.items()),
                 f"  replay: {replay}", "  steps:"]
        lines += [f"    {s}" for s in self.steps]
        for category, messages in self.failures.items():
            lines += [f"  {category}:"] + [f"    - {m}" for m in messages[:6]]
        lines += ["  transcript (last 40 lines):"] + [f"    {t}" for t in self.transcript[-40:]]
        return "\n".join(lines)


def _faults_text(rules: list[dict[str, Any]]) -> str:
    shown = [f"{r['type']} {r['op']} {r['mode']}" for r in rules]
    return "faults: " + ("; ".join(shown) if shown else "none")


def _short(text: str, limit: int = 600) -> str:
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " [...]"


class Walk:
    """One sequence in its own folder: module, runtime root and sim cloud of its own."""

    def __init__(self, folder: Path, engine: str, seed: int, steps: int) -> None:
        self.folder = folder
        runtime = folder / "runtime"
        runtime.mkdir(parents=True, mode=0o700)
        self.h = Hyops(folder, runtime, engine, folder / "cloud", {})
        self.module = folder / MODULE
        self.module.mkdir(parents=True)
        self.rng = random.Random(seed)
        self.steps = steps
        self.cfg: Config = initial(self.rng)
        self.out = Outcome(seed)
        self.fault_files = 0
        self.dirty = True  # the configuration may not be fully applied
        self.ls: list[dict[str, Any]] = []
        self.round_run: set[str] = set()

    # ----- running things -------------------------------------------------------------------
    def hy(self, *args: str) -> subprocess.CompletedProcess[str]:
        started = time.monotonic()
        out = self.h(*args)
        line = f"$ hyops {shlex.join(args)} -> exit {out.returncode} ({time.monotonic() - started:.1f}s)"
        if out.returncode not in (0, 3) or (args[0] in ("apply", "destroy") and out.returncode != 0):
            line += "\n      " + _short(out.stdout[-1500:] + "\n" + out.stderr[-1500:])
        self.out.transcript.append(line)
        return out

    def engine(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        """The engine itself in the module, as a person runs `terraform state mv` by hand."""
        env = self.h.env(TF_CLI_CONFIG_FILE=str(self.h.runtime_root / "sim" / "terraform.rc"),
                         HYOPS_SIM_PYTHON=sys.executable)
        out = subprocess.run([self.h.engine, *args], cwd=self.module, env=env, capture_output=True,
                             text=True, timeout=ENGINE_TIMEOUT, check=False)
        self.out.transcript.append(f"$ {Path(self.h.engine).name} {shlex.join(args)} (in {MODULE}) "
                                   f"-> exit {out.returncode}"
                                   + ("" if out.returncode == 0 else "\n      " + _short(out.stdout + out.stderr)))
        return out

    def write_config(self) -> None:
        (self.module / "main.tf").write_text(self.cfg.root_tf())
        child = self.cfg.child_tf()
        if child is not None:
            (self.module / CHILD_FOLDER).mkdir(exist_ok=True)
            (self.module / CHILD_FOLDER / "main.tf").write_text(child)

    def arm(self, rules: list[dict[str, Any]]) -> None:
        """A new faults file (a new run of it: its rules fire afresh) holding `rules`."""
        self.fault_files += 1
        path = self.folder / f"faults-{self.fault_files}.yml"
        path.write_text(yaml.safe_dump({"rules": rules}))
        self.h.extra_env["HYOPS_SIM_FAULTS"] = str(path)
        self.out.faults_armed += len(rules)

    def sim_ls(self) -> list[dict[str, Any]]:
        out = self.hy("sim", "ls", "--json")
        if out.returncode != 0:
            raise AssertionError(f"hyops sim ls failed: {out.stderr}")
        self.ls = json.loads(out.stdout)["objects"]
        return self.ls

    def record(self) -> dict[str, Any]:
        return self.h.record(REF) or {}

    # ----- what a person sees -----------------------------------------------------------------
    @staticmethod
    def managed(rec: dict[str, Any]) -> dict[str, str]:
        return {a: e["id"] for a, e in (rec.get("resources") or {}).items()
                if e.get("id") and e.get("status") != "destroyed"}

    @staticmethod
    def released(rec: dict[str, Any]) -> list[tuple[str, str]]:
        return [(o.get("address", ""), o.get("id", "")) for o in rec.get("released") or []]

    def facts(self) -> Facts:
        rec = self.record()
        return Facts(self.managed(rec), self.released(rec), {o["id"]: o for o in self.sim_ls()})

    # ----- the invariants ---------------------------------------------------------------------
    def observe(self, context: str, settled: bool = False) -> None:
        """The invariants, after a command. Two live objects with one name are tolerated only
        while the record says so (not `settled`): all but one are deposed entries, or a suspect
        orphan of their type is listed (a fault lost a create's answer: the record names it);
        once reconcile says consistent (`settled`), never."""
        objects = self.sim_ls()
        rec = self.record()
        entries = {a: e for a, e in (rec.get("resources") or {}).items()
                   if e.get("id") and e.get("status") != "destroyed"}
        deposed = {e["id"] for a, e in entries.items() if e.get("deposed") or "(deposed" in a}
        orphans = {address_type(o.get("address", "")) for o in rec.get("suspect_orphans") or []}
        named = Counter(o["name"] for o in objects)
        for name, n in named.items():
            if n < 2:
                continue
            group = [o for o in objects if o["name"] == name]
            said = (sum(o["id"] not in deposed for o in group) <= 1
                    or group[0]["type"] in orphans or "*" in orphans)
            if settled or not said:
                ids = ", ".join(f"{o['id']} ({o['type']})" for o in group)
                self.out.fail("duplicated", f"{context}: {n} live objects named {name}: {ids}"
                              + (" although reconcile says consistent" if settled else ""))
        where: dict[str, list[str]] = {}
        for address, entry in entries.items():
            where.setdefault(entry["id"], []).append(address)
        for ident, addresses in where.items():
            if len(addresses) > 1:
                self.out.fail("duplicated", f"{context}: the record lists {ident} at {len(addresses)} "
                              f"addresses: {', '.join(sorted(addresses))}")
        released = {i for _, i in self.released(rec)}
        for o in objects:
            if o["id"] in where or o["id"] in released or o["type"] in orphans or "*" in orphans:
                continue
            self.out.fail("under-claiming", f"{context}: live {o['type']} {o['id']} (name {o['name']}) is "
                          f"neither in resources, released nor a suspect orphan of the record "
                          f"(status {rec.get('status')}, suspect orphans {sorted(orphans) or 'none'})")

    def converged_matches_model(self, context: str) -> None:
        """Once the configuration is fully applied, the record holds exactly its instances."""
        rec = self.record()
        managed = self.managed(rec)
        by_id = {o["id"]: o for o in self.ls}
        expected = self.cfg.instances()
        problems = []
        if rec.get("status") != "ok":
            problems.append(f"record status {rec.get('status')}")
        unsettled = {a: e.get("status") for a, e in (rec.get("resources") or {}).items()
                     if e.get("status") not in ("complete", "destroyed")}
        if unsettled:  # after a converged apply every current object is complete (no pending, no error)
            problems.append(f"the fully applied record lists entries not complete: {unsettled}")
        if set(managed) != set(expected):
            extra, lacking = sorted(set(managed) - set(expected)), sorted(set(expected) - set(managed))
            problems.append(f"record addresses differ from the configuration: extra {extra}, lacking {lacking}")
        for address, name in expected.items():
            obj = by_id.get(managed.get(address, ""))
            if address in managed and (obj is None or obj["name"] != name):
                problems.append(f"{address} is {managed[address]} "
                                f"({'not live' if obj is None else 'named ' + obj['name']}), expected {name}")
        for problem in problems:
            self.out.fail("diverged", f"{context}: {problem}")

    # ----- following reconcile ----------------------------------------------------------------
    def reconcile(self) -> dict[str, Any] | None:
        out = self.hy("reconcile", MODULE, "--json")
        try:
            return json.loads(out.stdout)
        except ValueError:
            return None

    def settle(self, label: str) -> int | None:
        """Rounds of advice until consistent (0: consistent at once); None when stuck."""
        for rounds in range(MAX_ROUNDS + 1):
            report = self.reconcile()
            if report is None:
                self.out.fail("stuck", f"{label}: reconcile printed no JSON report")
                return None
            if report.get("consistent"):
                self.observe(f"{label}: consistent after {rounds} round(s) of advice", settled=True)
                return rounds
            if rounds == MAX_ROUNDS:
                break
            findings = [f for m in report.get("modules", []) for f in m.get("findings", [])]
            if not findings:
                unread = [m.get("could_not_check") for m in report.get("modules", [])]
                self.out.fail("stuck", f"{label}: not consistent, yet no finding to act on ({unread})")
                return None
            self.round_run = set()
            for finding in findings:
                if finding["code"] == "stale_import":  # the edit it asks for, literally
                    self.drop_imports(finding.get("addresses") or [])
                for command in finding.get("next_actions") or []:
                    if not self.follow(command, label):
                        return None
                if finding.get("alternatives"):
                    choice = self.choose(finding)
                    if choice is None or not self.follow(choice, label):
                        return None
        codes = [f"{f['code']}: {f['detail'][:200]}" for m in report.get("modules", []) for f in m["findings"]]
        self.out.fail("stuck", f"{label}: still not consistent after {MAX_ROUNDS} rounds of advice: {codes}")
        return None

    def drop_imports(self, addresses: list[str]) -> None:
        """Delete the `import` blocks for `addresses` from the configuration, as advised."""
        self.out.commands["edit: drop import blocks"] += 1
        self.cfg.imports = [(to, ident) for to, ident in self.cfg.imports if to not in addresses]
        self.write_config()

    def choose(self, finding: dict[str, Any]) -> str | None:
        alternatives = finding["alternatives"]
        commands = [a["command"] for a in alternatives]
        if finding["code"] == "suspect_orphan":
            ident = self.lookup(finding)
            wanted = ("--import", "sim rm") if ident else ("--forget-orphan",)
            picked = next((c for c in commands if any(w in c for w in wanted)), None)
            if picked is not None and ident:
                picked = picked.replace("<id>", ident)
            if picked is not None:
                return picked
        for verb in ("hyops apply", "hyops reconcile", "hyops stack apply", "hyops destroy"):
            for command in commands:
                if command.startswith(verb):
                    return command
        self.out.fail("stuck", f"no alternative of {finding['code']} can be followed: {commands}")
        return None

    def lookup(self, finding: dict[str, Any]) -> str | None:
        """The suspect orphan's object, looked up as the advice says: by the attributes it was
        planned with (its name), among live objects the record does not hold or release."""
        address = (finding.get("addresses") or ["*"])[0]
        name = (finding.get("planned_attributes") or {}).get("name") or self.cfg.instances().get(address)
        rec = self.record()
        held = set(self.managed(rec).values()) | {i for _, i in self.released(rec)}
        objects = self.ls or self.sim_ls()
        found = [o["id"] for o in objects if o["type"] == address_type(address) and o["name"] == name
                 and o["id"] not in held]
        return found[0] if found else None

    def follow(self, command: str, label: str) -> bool:
        """Run one advised command line as the user would; False when it cannot be followed."""
        if command in self.round_run:
            return True  # the same command twice in one round (tainted and partial_apply: apply)
        self.round_run.add(command)
        argv = shlex.split(command)
        if argv and argv[0] == "hyops":
            args = argv[1:]
            kind = self.kind_of(args)
            self.out.commands[kind] += 1
            out = self.hy(*args)
            if kind == "sim ls" and out.returncode == 0:
                self.sim_ls()  # what it showed, as data
            if kind == "apply":
                self.dirty = out.returncode != 0
            elif kind not in ("sim ls", "reconcile"):
                self.dirty = True
            if kind not in ("sim ls", "reconcile"):
                self.observe(f"{label}: after `{command}`")
            return True
        if len(argv) >= 4 and argv[1].startswith("-chdir=") and argv[2:4] == ["state", "push"]:
            self.out.commands["state push"] += 1
            self.engine(argv[2:])  # run from the module folder: -chdir is where we are
            self.dirty = True
            return True
        self.out.fail("stuck", f"{label}: advice {command!r} is no hyops command this walk can run")
        return False

    @staticmethod
    def kind_of(args: list[str]) -> str:
        if args[:2] in (["sim", "ls"], ["sim", "rm"]):
            return " ".join(args[:2])
        if args[0] == "reconcile":
            for flag in ("--import", "--forget-orphan", "--write"):
                if flag in args:
                    return f"reconcile {flag}"
        return args[0]

    # ----- one step ---------------------------------------------------------------------------
    def fired(self) -> int:
        return sum(1 for c in self.h.sim_calls() if c.get("fault"))

    def apply_step(self, label: str, apply_args: list[str]) -> bool:
        before = self.fired()
        out = self.hy("apply", MODULE, *apply_args)
        self.dirty = out.returncode != 0
        # exit 2: the engine refused before any change; only a fault (a read failing the plan)
        # may cause that here: otherwise the walk wrote a configuration the engine rejects
        if out.returncode not in (0, 1) and not (out.returncode == 2 and self.fired() > before):
            self.out.fail("other", f"{label}: apply exited {out.returncode}: "
                          f"{_short(out.stdout[-800:] + out.stderr[-800:])}")
            return False
        self.observe(f"{label}: after the apply")
        rounds = self.settle(label)
        if rounds is None:
            return False
        self.out.rounds.append(rounds)
        converged = not self.dirty
        if not converged:
            plan = self.hy("plan", MODULE, "--detailed-exitcode")
            converged = plan.returncode == 0
        if converged:
            self.converged_matches_model(label)
            self.cfg.settled()
        return True

    def faults(self, touches: list[tuple[str, str]]) -> list[dict[str, Any]]:
        return faults(self.cfg, self.rng, touches)

    def run(self) -> Outcome:
        started = time.monotonic()
        try:
            self._run()
        except Exception:  # noqa: BLE001 - a broken walk is a failed sequence, with its trace
            self.out.fail("other", "the walk raised: " + traceback.format_exc(limit=6))
        self.out.faults_fired = self.fired()
        self.out.seconds = time.monotonic() - started
        return self.out

    def _run(self) -> None:
        rules = self.faults([(t, "create") for t in ("sim_network", "sim_vm", "sim_health_check")])
        self.out.steps.append(f"0 initial: {self.cfg.describe()}; {_faults_text(rules)}")
        self.out.kinds.append("initial")
        self.write_config()
        self.arm(rules)
        if not self.apply_step("step 0 (initial)", []):
            return
        for i in range(1, self.steps + 1):
            step = refactor(self.cfg, self.rng, self.facts())
            rules = self.faults(step.touches)
            self.out.steps.append(f"{i} {step.kind}: {step.text}; {_faults_text(rules)}")
            self.out.kinds.append(step.kind)
            self.write_config()
            self.dirty = True
            for args in step.engine_commands:
                if self.engine(args).returncode != 0:
                    self.out.fail("other", f"step {i}: `{shlex.join(args)}` by hand failed")
                    return
            self.arm(rules)
            if not self.apply_step(f"step {i} ({step.kind})", step.apply_args):
                return
        self.finish()

    def finish(self) -> None:
        self.arm([])
        out = self.hy("destroy", MODULE)
        rec = self.record()
        if out.returncode != 0 or rec.get("status") != "destroyed":
            self.out.fail("other", f"final destroy: exit {out.returncode}, record {rec.get('status')}")
        self.observe("after the final destroy", settled=True)
        released = {i for _, i in self.released(rec)}
        left = [f"{o['type']} {o['id']} ({o['name']})" for o in self.ls if o["id"] not in released]
        if left:
            self.out.fail("other", f"after the final destroy, live objects that are not released: {left}")
