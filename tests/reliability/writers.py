"""The generator of other writers (issue 54): seeded sequences of steps by hyops, a teammate's
raw engine and the cloud itself, over one small sim module, with four invariants checked after
every step.

A sequence (writers_steps.py makes them) is a list of plain step strings (readable, replayable,
shrinkable), always starting with `hyops apply web small`. The steps (VMS is a comma list of
for_each keys out of web, db; KEY one of them):

    hyops apply VMS SIZE       hyops apply -replace KEY   hyops destroy   hyops plan
    hyops reconcile --write    follow N (the N-th command reconcile printed last, as printed:
                               next actions first, then alternatives; N modulo their count)
    tf apply VMS SIZE          tf apply -replace KEY      tf taint KEY    tf untaint KEY
    tf state rm KEY            tf state mv KEY KEY2 (declared)   tf state mv KEY spare (undeclared)
    tf push-old K (`state push -force` of the state copy taken K steps back)
    tf import KEY (the live vm named drill-KEY no state holds)   tf destroy
    cloud rm NAME (`hyops sim rm` of the newest live object named drill-NAME)
    cloud create NAME (an object named drill-NAME made out of band)

`tf` is the engine under test, run in the module's folder as a teammate runs it, with the
inputs of the last apply. After every step `hyops reconcile --json` runs, and:
  (a) every live object the record ever held is held now by the state or the record (resources
      not destroyed, or released), or a person forgot it (`reconcile --forget-*`);
  (b) reconcile exits 0 only when record, state and cloud agree: the record's objects are the
      state's, every state object is live, every live object once held is held or forgotten;
  (c) a printed command run as printed never makes a second live object of one name, nor does
      a `hyops apply` while the record holds a live object of that name that no state holds;
  (d) the record never drops a live id except by a person's forget (an engine delete or a
      refresh that shows it gone are the other proofs, and both mean the id is not live);
  (e) a printed engine command (`terraform ... untaint`, `state mv`) run as printed succeeds: it
      is the settle, not a command that fails by design (a dropped workspace, a wrong address).
A third of the seeds (seed % 3 == 2) run the whole sequence in workspace `stg`: hyops with
`--workspace stg`, the teammate with `TF_WORKSPACE=stg`, and a printed command exactly as
printed (its own `NAME=value` words are its environment, nothing else selects the workspace),
so advice that drops the workspace acts on the default one and breaks (a), (b) or (d).
A failure is (invariant, step kind): its family. `shrink` keeps the shortest step list that
still fails in the same family (tests/reliability/test_writers_drill.py).
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridops_tf.sim.store import SimStore
from tests.integration.hyops_cli import Hyops
from tests.reliability.writers_steps import MODULE_TF, kind

MODULE = "modules/m"
REF = "m"
WORKSPACE = "stg"


def workspace_of(seed: int | None) -> str:
    """The workspace a seeded sequence runs in: `stg` for a third of the seeds."""
    return WORKSPACE if seed is not None and seed % 3 == 2 else "default"
ENGINE_TIMEOUT = 300


# ----- what a step leaves behind --------------------------------------------------------------------

@dataclass(frozen=True)
class Failure:
    invariant: str  # a to e, or "error" (a hyops traceback or bug)
    step_kind: str  # the kind of the step after which it broke ("follow apply": the command it ran)
    index: int
    message: str

    @property
    def family(self) -> tuple[str, str]:
        return (self.invariant, self.step_kind)


@dataclass
class Outcome:
    seed: int | None
    steps: list[str]
    failures: list[Failure] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    seconds: float = 0.0
    followed: Counter[str] = field(default_factory=Counter)
    workspace: str = "default"

    @property
    def ok(self) -> bool:
        return not self.failures

    def families(self) -> set[tuple[str, str]]:
        return {f.family for f in self.failures}

    def explain(self) -> str:
        lines = [f"writers drill seed={self.seed} (workspace {self.workspace}): {len(self.failures)} "
                 "broken invariant(s)", "  steps:"]
        lines += [f"    {i}: {s}" for i, s in enumerate(self.steps)]
        lines += [f"  ({f.invariant}) after step {f.index} [{f.step_kind}]: {f.message}" for f in self.failures[:6]]
        lines += ["  transcript (last 30 lines):"] + [f"    {t}" for t in self.transcript[-30:]]
        return "\n".join(lines)


def held_ids(rec: dict[str, Any] | None) -> set[str]:
    """Ids the record holds: resources not destroyed, and released objects."""
    rec = rec or {}
    ids = {e["id"] for e in (rec.get("resources") or {}).values() if e.get("id") and e.get("status") != "destroyed"}
    return ids | {o["id"] for o in rec.get("released") or [] if o.get("id")}


def resource_ids(rec: dict[str, Any] | None) -> set[str]:
    return {e["id"] for e in ((rec or {}).get("resources") or {}).values()
            if e.get("id") and e.get("status") != "destroyed"}


def released_ids(rec: dict[str, Any] | None) -> set[str]:
    return {o["id"] for o in (rec or {}).get("released") or [] if o.get("id")}


def _short(text: str, limit: int = 500) -> str:
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " [...]"


# ----- running a sequence ---------------------------------------------------------------------------

class Drill:
    """One sequence in its own folder: module, runtime root and sim cloud of its own."""

    def __init__(self, folder: Path, engine: str, steps: list[str], seed: int | None = None,
                 workspace: str | None = None) -> None:
        if folder.exists():
            shutil.rmtree(folder)
        (folder / "runtime").mkdir(parents=True, mode=0o700)
        self.folder = folder
        self.h = Hyops(folder, folder / "runtime", engine, folder / "cloud", {})
        self.module = folder / MODULE
        self.module.mkdir(parents=True)
        (self.module / "main.tf").write_text(MODULE_TF)
        self.out = Outcome(seed, list(steps))
        self.workspace = workspace or workspace_of(seed)
        self.ws = [] if self.workspace == "default" else ["--workspace", self.workspace]
        self.out.workspace = self.workspace
        self.inputs = ("web", "small")  # the last apply's, which a teammate's command reuses
        self.snapshots: list[str | None] = []  # the state file before each step
        self.ever_held: set[str] = set()
        self.forgotten: set[str] = set()
        self.report: dict[str, Any] = {}
        self.last_objects: list[dict[str, Any]] = []  # `sim ls` after the last step
        self.last_before: list[dict[str, Any]] = []  # ... and before this one

    # ----- running things -----------------------------------------------------------------------
    def hy(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        started = time.monotonic()
        out = self.h(*args, env=env)
        line = f"$ hyops {shlex.join(args)} -> exit {out.returncode} ({time.monotonic() - started:.1f}s)"
        if out.returncode not in (0, 3) and args[:2] != ("reconcile", MODULE):
            line += "\n      " + _short(out.stdout[-800:] + "\n" + out.stderr[-800:])
        self.out.transcript.append(line)
        return out

    def tf(self, *args: str, cwd: Path | None = None, argv0: str | None = None,
           printed_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """The engine as a teammate runs it, in the sequence's workspace; a printed command
        (`printed_env`: its own NAME=value words) selects its workspace itself or not at all."""
        env = self.h.env(TF_CLI_CONFIG_FILE=str(self.h.runtime_root / "sim" / "terraform.rc"),
                         HYOPS_SIM_PYTHON=sys.executable)
        env.pop("TF_WORKSPACE", None)
        if printed_env is not None:
            env.update(printed_env)
        elif self.workspace != "default":
            env["TF_WORKSPACE"] = self.workspace
        out = subprocess.run([argv0 or self.h.engine, *args], cwd=cwd or self.module, env=env, capture_output=True,
                             text=True, timeout=ENGINE_TIMEOUT, check=False)
        self.out.transcript.append(f"$ terraform {shlex.join(args)} -> exit {out.returncode}"
                                   + ("" if out.returncode == 0 else "\n      " + _short(out.stdout + out.stderr)))
        return out

    def state(self) -> dict[str, Any]:
        path = self.state_path()
        try:
            return json.loads(path.read_text()) if path.exists() else {}
        except ValueError:
            return {}

    def state_path(self) -> Path:
        if self.workspace == "default":
            return self.module / "terraform.tfstate"
        return self.module / "terraform.tfstate.d" / self.workspace / "terraform.tfstate"

    def state_ids(self) -> set[str]:
        return {i["attributes"]["id"] for r in self.state().get("resources") or []
                for i in r.get("instances") or [] if (i.get("attributes") or {}).get("id")}

    def cloud(self) -> list[dict[str, Any]]:
        """The live objects, read in-process (to pick a step's object; the checks use `sim ls`)."""
        found = sorted(SimStore(self.h.sim_root).list_objects(), key=lambda o: (o.created_at, o.id))
        return [{"id": o.id, "name": o.name, "type": o.type} for o in found]  # oldest first

    def record(self) -> dict[str, Any]:
        return self.h.record(REF if self.workspace == "default" else f"{REF}@{self.workspace}") or {}

    @staticmethod
    def _var_args(vms: str, size: str) -> list[str]:
        return ["-var", "vms=" + json.dumps(vms.split(",")), "-var", f"size={size}"]

    # ----- one step -------------------------------------------------------------------------------
    def do(self, index: int, step: str) -> str:
        """Carry out `step`; returns its kind as reported (a `follow` names what it ran)."""
        words = step.split()
        vms, size = self.inputs
        if words[:2] == ["hyops", "apply"] and words[2] == "-replace":
            self.hy("apply", MODULE, *self.ws, "--var", f"vms=[{vms}]", "--var", f"size={size}", "--",
                    f'-replace=sim_vm.vm["{words[3]}"]')
        elif words[:2] == ["hyops", "apply"]:
            self.inputs = (words[2], words[3])
            self.hy("apply", MODULE, *self.ws, "--var", f"vms=[{words[2]}]", "--var", f"size={words[3]}")
        elif words[0] == "hyops":
            self.hy(words[1], MODULE, *self.ws, *words[2:])
        elif words[0] == "follow":
            return self.follow(index, int(words[1]))
        elif words[:2] == ["tf", "apply"] and words[2] == "-replace":
            self.tf("apply", "-auto-approve", "-input=false", *self._var_args(vms, size),
                    f'-replace=sim_vm.vm["{words[3]}"]')
        elif words[:2] == ["tf", "apply"]:
            self.inputs = (words[2], words[3])
            self.tf("apply", "-auto-approve", "-input=false", *self._var_args(words[2], words[3]))
        elif words[:2] == ["tf", "destroy"]:
            self.tf("destroy", "-auto-approve", "-input=false", *self._var_args(vms, size))
        elif words[1] in ("taint", "untaint"):
            self.tf(words[1], f'sim_vm.vm["{words[2]}"]')
        elif words[:3] == ["tf", "state", "rm"]:
            self.tf("state", "rm", f'sim_vm.vm["{words[3]}"]')
        elif words[:3] == ["tf", "state", "mv"]:
            target = "sim_vm.spare" if words[4] == "spare" else f'sim_vm.vm["{words[4]}"]'
            self.tf("state", "mv", f'sim_vm.vm["{words[3]}"]', target)
        elif words[:2] == ["tf", "push-old"]:
            self.push_old(index, int(words[2]))
        elif words[:2] == ["tf", "import"]:
            free = [o for o in self.cloud() if o["name"] == f"drill-{words[2]}" and o["id"] not in self.state_ids()]
            if free:
                self.tf("import", "-input=false", *self._var_args(vms, size), f'sim_vm.vm["{words[2]}"]',
                        free[-1]["id"])
        elif words[:2] == ["cloud", "rm"]:
            found = [o for o in self.cloud() if o["name"] == f"drill-{words[2]}"]
            if found:
                self.hy("sim", "rm", found[-1]["id"])
        elif words[:2] == ["cloud", "create"]:
            self.create_out_of_band(words[2])
        else:
            raise ValueError(f"no such drill step: {step!r}")
        return kind(step)

    def push_old(self, index: int, back: int) -> None:
        copy = self.snapshots[max(0, index - back)] if self.snapshots else None
        if copy is None:
            return
        path = self.folder / f"old-{index}.tfstate"
        path.write_text(copy)
        self.tf("state", "push", "-force", str(path))

    def create_out_of_band(self, key: str) -> None:
        nets = [o for o in self.cloud() if o["type"] == "sim_network"]
        if not nets:
            return
        made = SimStore(self.h.sim_root).create("sim_vm", f"drill-{key}",
                                                {"size": "small", "network_id": nets[0]["id"], "ip": "10.0.9.9"})
        self.out.transcript.append(f"(out of band) created sim_vm {made.id} named drill-{key}")

    def printed(self) -> list[str]:
        """The commands the last reconcile printed, in order: next actions, then alternatives."""
        findings = [f for m in self.report.get("modules") or [] for f in m.get("findings") or []]
        firsts = [c for f in findings for c in f.get("next_actions") or []]
        return firsts + [a["command"] for f in findings for a in f.get("alternatives") or []]

    def follow(self, index: int, n: int) -> str:
        commands = [c for c in self.printed() if "<" not in c]  # a placeholder needs a person
        if not commands:
            return "follow (nothing printed)"
        command = commands[n % len(commands)]
        argv = shlex.split(command)
        printed_env: dict[str, str] = {}
        while argv and "=" in argv[0] and argv[0].split("=", 1)[0].isidentifier():  # `NAME=value cmd`
            name, _, value = argv.pop(0).partition("=")
            printed_env[name] = value
        if argv[0] == "hyops":
            label = "follow " + " ".join(w for w in argv[1:3] if not w.startswith(MODULE))
            label += "".join(f" {flag}" for flag in ("--write", "--import", "--forget-missing", "--forget-orphan",
                                                      "--forget-released") if flag in argv)
            before = held_ids(self.record())
            self.hy(*argv[1:], env=printed_env)
            if any(w.startswith("--forget") for w in argv):
                self.forgotten |= before - held_ids(self.record())
        else:
            label = "follow engine " + " ".join(w for w in argv[1:3] if not w.startswith("-chdir"))
            ran = self.tf(*argv[1:], cwd=self.folder, argv0=self.h.engine, printed_env=printed_env)
            if ran.returncode != 0:
                self.out.failures.append(Failure("e", label, index, "the printed engine command failed as printed: "
                                                 + _short(ran.stdout + ran.stderr, 300)))
        self.out.followed[label] += 1
        return label

    # ----- the invariants -------------------------------------------------------------------------
    def check(self, index: int, step_kind: str, before_rec: dict[str, Any], before_state: set[str]) -> None:
        before_names = Counter(o["name"] for o in self.last_before)
        objects = self.h.sim_objects()
        self.last_objects = objects
        live = {o["id"] for o in objects}
        rec = self.record()
        state = self.state_ids()
        held = held_ids(rec)
        self.ever_held |= held

        def fail(invariant: str, message: str) -> None:
            self.out.failures.append(Failure(invariant, step_kind, index, message))

        lost = {i for i in (self.ever_held & live) - state - held - self.forgotten}
        if lost:
            fail("a", f"live {sorted(lost)} once in the record is held by neither state nor record "
                      f"(record status {rec.get('status')})")
        dropped = (held_ids(before_rec) - held) & live - self.forgotten
        if dropped:
            fail("d", f"the record dropped live {sorted(dropped)} without proof")
        names = Counter(o["name"] for o in objects)
        twice = sorted(n for n, c in names.items() if c > 1 and c > before_names.get(n, 0))
        if twice and step_kind.startswith("follow"):
            fail("c", f"the printed command made a second live object named {twice}")
        unsettled = {o["name"] for o in self.last_before if o["id"] in held_ids(before_rec) - before_state}
        if step_kind.startswith("hyops apply") and set(twice) & unsettled:
            fail("c", f"hyops apply made a second live object named {sorted(set(twice) & unsettled)} while "
                      "the record held a live one no state held")
        code, self.report = self.reconcile()
        if code == 0:
            problems = []
            if resource_ids(rec) != state:
                problems.append(f"record {sorted(resource_ids(rec))} != state {sorted(state)}")
            if state - live:
                problems.append(f"state objects not live: {sorted(state - live)}")
            unheld = (self.ever_held | state) & live - state - released_ids(rec) - self.forgotten
            if unheld:
                problems.append(f"live objects held by no state: {sorted(unheld)}")
            names = Counter(o["name"] for o in objects if o["id"] in state | held)
            if any(c > 1 for c in names.values()):
                problems.append(f"two held live objects share a name: {dict(names)}")
            if problems:
                fail("b", "reconcile exit 0 (consistent) although " + "; ".join(problems))

    def reconcile(self) -> tuple[int, dict[str, Any]]:
        out = self.hy("reconcile", MODULE, *self.ws, "--json")
        try:
            return out.returncode, json.loads(out.stdout)
        except ValueError:
            return out.returncode, {}

    def run(self) -> Outcome:
        started = time.monotonic()
        for index, step in enumerate(self.out.steps):
            self.snapshots.append(self.state_path().read_text() if self.state_path().exists() else None)
            before_rec, before_state = self.record(), self.state_ids()
            self.last_before = self.last_objects
            self.out.transcript.append(f"# step {index}: {step}")
            try:
                step_kind = self.do(index, step)
                self.check(index, step_kind, before_rec, before_state)
            except AssertionError as err:  # a traceback or a bug in hyops (tests/integration/hyops_cli.py)
                self.out.failures.append(Failure("error", kind(step), index, _short(str(err), 800)))
            if self.out.failures:
                break  # the first broken step is the finding; what follows it proves nothing more
        self.out.seconds = time.monotonic() - started
        return self.out


def run_steps(folder: Path, engine: str, steps: list[str], seed: int | None = None,
              workspace: str | None = None) -> Outcome:
    return Drill(folder, engine, steps, seed, workspace).run()


def shrink(folder: Path, engine: str, failed: Outcome, budget: int = 20) -> Outcome:
    """The shortest step list (FIRST kept) found that still fails in the family of `failed`'s
    first failure: cut after the failing step, then delta debugging over the rest: drop chunks
    of half the steps, then quarters, down to single steps, from the end, keeping every drop
    after which the family still fails; at most `budget` reruns."""
    family = failed.failures[0].family
    best, steps = failed, failed.steps[: failed.failures[0].index + 1]
    runs = 0
    chunk = max(1, (len(steps) - 1) // 2)
    while runs < budget:
        dropped = False
        i = len(steps) - chunk
        while i >= 1 and runs < budget:
            trial = steps[:i] + steps[i + chunk:]
            runs += 1
            out = run_steps(folder / f"shrink-{runs}", engine, trial, failed.seed)
            shutil.rmtree(folder / f"shrink-{runs}", ignore_errors=True)
            if family in out.families():
                best, steps, dropped = out, trial[: out.failures[0].index + 1], True
            i = min(i, len(steps)) - chunk
        if chunk == 1 and not dropped:
            break
        chunk = max(1, chunk // 2) if not dropped or chunk > 1 else 1
    best.steps = steps
    return best
