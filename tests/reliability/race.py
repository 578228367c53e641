"""Race many `hyops` processes on one module while a reader and a /proc sampler watch.

What a race proves, from evidence gathered while it ran and from what it left:
- at most one mutation at a time: the engine-reported time spans (first and last
  `@timestamp` of each run's events.jsonl) never overlap, the /proc sampler never saw two
  mutating engines for the module at once, and every provider create/delete happened
  inside the span of the run that the record (copied by the sim provider at that call via
  HYOPS_SIM_WATCH_FILE) named as `running`;
- the reader never saw a torn or invalid latest.json;
- no update lost: every run that ran has its run_id seen in the record, and the final
  record belongs to the last run, with that run's outcome;
- losers exit 4 naming the holder.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hybridops_tf.record.model import OperationRecord
from tests.integration.hyops_cli import Hyops
from tests.reliability import procs

BUSY = re.compile(r"is locked by pid (\d+) on (\S+) \(user (\S+), run (\S+), since (\S+)\)")
RAN = re.compile(r"\(run ((?:apply|destroy|refresh|import)-\S+)\)")


def ts(text: str) -> float:
    """ISO-8601 UTC with Z (micro- or nanoseconds) -> epoch seconds."""
    text = text.rstrip("Z")
    head, _, frac = text.partition(".")
    base = datetime.fromisoformat(head + "+00:00").timestamp()
    return base + (float("0." + frac) if frac else 0.0)


class RecordReader(threading.Thread):
    """Reads latest.json in a tight loop: every read must be a whole, valid record."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.reads = 0
        self.invalid: list[str] = []
        self.seen: dict[str, set[str]] = {}  # run_id -> statuses seen
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                text = self.path.read_text()
            except FileNotFoundError:
                time.sleep(0.001)
                continue
            self.reads += 1
            try:
                doc = json.loads(text)
                OperationRecord.from_dict(doc)
            except ValueError as err:
                self.invalid.append(f"{err}: {text[:200]!r}")
                continue
            self.seen.setdefault(doc["run_id"], set()).add(doc["status"])
            time.sleep(0.001)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=30)


class MutationSampler(threading.Thread):
    """Samples /proc: the most apply/destroy engines of the module ever alive at once."""

    def __init__(self, module_dir: Path) -> None:
        super().__init__(daemon=True)
        self.module_dir = module_dir
        self.samples = 0
        self.most = 0
        self.worst: dict[int, Any] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            alive = procs.top_level(procs.engine_pids(self.module_dir, ("apply", "destroy")))
            self.samples += 1
            if len(alive) > self.most:
                self.most = len(alive)
                self.worst = {p: (procs.cmdline(p), procs.state(p), procs.children(p)) for p in alive}
            time.sleep(0.003)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=30)


@dataclass
class Contender:
    command: str
    lock_timeout: float
    proc: subprocess.Popen[str]
    stdout: str = ""
    stderr: str = ""

    @property
    def code(self) -> int:
        return self.proc.returncode

    @property
    def run_id(self) -> str | None:
        m = RAN.search(self.stdout)
        return m.group(1) if m else None


@dataclass
class RaceReport:
    contenders: list[Contender] = field(default_factory=list)
    reader: RecordReader | None = None
    sampler: MutationSampler | None = None
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    mutations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ran(self) -> list[Contender]:
        """apply/destroy contenders that took the lock and ran the engine."""
        return [c for c in self.contenders if c.code in (0, 1) and c.command in ("apply", "destroy")]

    @property
    def refused(self) -> list[Contender]:
        return [c for c in self.contenders if c.code == 4]


def race(h: Hyops, module_arg: str, module_dir: Path, ref: str, *, processes: int, rounds: int,
         seed: int, commands: tuple[str, ...] = ("apply", "destroy"),
         extra: dict[str, tuple[str, ...]] | None = None) -> RaceReport:
    """`rounds` times, start `processes` contenders at once; half wait for the lock."""
    rng = random.Random(seed)
    report = RaceReport()
    record = h.record_path(ref)
    report.reader = RecordReader(record)
    report.sampler = MutationSampler(module_dir)
    report.reader.start()
    report.sampler.start()
    env = {"HYOPS_SIM_WATCH_FILE": str(record)}
    calls_before = len(h.sim_calls())
    try:
        for _ in range(rounds):
            batch = []
            for i in range(processes):
                command = rng.choice(commands)
                timeout = 0.0 if i % 2 == 0 else 300.0
                args = [command, module_arg, *(extra or {}).get(command, ()),
                        "--lock-timeout", f"{timeout:g}"]
                batch.append(Contender(command, timeout, h.start(*args, env=env)))
            for c in batch:
                c.stdout, c.stderr = c.proc.communicate(timeout=600)
            report.contenders += batch
    finally:
        report.reader.stop()
        report.sampler.stop()
    runs = h.runtime_root / "runs" / ref.replace("/", "__")
    for folder in sorted(runs.iterdir()) if runs.exists() else []:
        stamps = []
        for line in (folder / "events.jsonl").read_text().splitlines() if (folder / "events.jsonl").exists() else []:
            try:
                stamps.append(ts(json.loads(line)["@timestamp"]))
            except (ValueError, KeyError, TypeError):
                continue
        if stamps:
            report.spans[folder.name] = (min(stamps), max(stamps))
        if (folder / "result.json").exists():
            report.results[folder.name] = json.loads((folder / "result.json").read_text())
    report.mutations = [c for c in h.sim_calls()[calls_before:] if c["op"] in ("create", "delete")]
    return report
