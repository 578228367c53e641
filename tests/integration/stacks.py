"""What the stack tests share: a scratch stack directory holding copies of the example
modules and a stack.yml written per test, with readers for the run report, records and run
folders, all through the real `hyops` and the sim cloud. The fixtures that make one
(`stack_env`, `applied`) are in conftest.py."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.runtime import live_journal
from tests.integration.helpers import copy_module
from tests.integration.hyops_cli import Hyops
from tests.stackfiles import DEMO, write_stack


@dataclass
class StackEnv:
    """One test's stack directory and `hyops`, with readers for what a run leaves."""

    hyops: Hyops
    directory: Path

    def write(self, text: str = DEMO) -> Path:
        return write_stack(self.directory, text)

    def module(self, name: str, source: str | None = None, text: str | None = None) -> Path:
        """A module directory in the stack: a copy of modules/sim/<source>, or `text` as main.tf."""
        target = self.directory / name
        if text is not None:
            target.mkdir(parents=True)
            (target / "main.tf").write_text(textwrap.dedent(text))
        else:
            copy_module(source or name, target)
        return target

    def stack(self, *args: str) -> Any:
        return self.hyops("stack", *args)

    def report(self, stack: str = "demo") -> dict[str, Any]:
        """The report as `stack status` reads it: a killed run's journaled updates folded in."""
        path = self.hyops.runtime_root / "stacks" / stack / "latest.json"
        return live_journal.fold(json.loads(path.read_text()), path)

    def run_dir(self, ref: str, run_id: str) -> Path:
        return self.hyops.runtime_root / "runs" / ref.replace("/", "__") / run_id

    def run_dirs(self, ref: str) -> list[Path]:
        base = self.hyops.runtime_root / "runs" / ref.replace("/", "__")
        return sorted(base.iterdir()) if base.is_dir() else []

    def events(self, ref: str, run_id: str) -> list[dict[str, Any]]:
        text = (self.run_dir(ref, run_id) / "events.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def sim_creates(self, sim_type: str) -> list[dict[str, Any]]:
        return [c for c in self.hyops.sim_calls() if c["op"] == "create" and c["type"] == sim_type]


def members(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in report["members"]}


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {m["name"]: m["status"] for m in report["members"]}
