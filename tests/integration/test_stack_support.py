"""Shared fixtures for the stack tests (no tests here): a scratch stack directory holding
copies of the example modules, a stack.yml written per test, and readers for the run
report, records and run folders, all through the real `hyops` and the sim cloud."""

from __future__ import annotations

import json
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import SIM_MODULES
from tests.integration.hyops_cli import Hyops
from tests.stackfiles import DEMO, write_stack

IGNORE = shutil.ignore_patterns(".terraform", ".terraform.lock.hcl", "terraform.tfstate*", "terraform.tfstate.d",
                                "errored.tfstate")


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
            shutil.copytree(SIM_MODULES / (source or name), target, ignore=IGNORE)
        return target

    def stack(self, *args: str) -> Any:
        return self.hyops("stack", *args)

    def report(self, stack: str = "demo") -> dict[str, Any]:
        return json.loads((self.hyops.runtime_root / "stacks" / stack / "latest.json").read_text())

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


@pytest.fixture
def stack_env(tmp_path: Path, hyops: Hyops) -> StackEnv:
    directory = tmp_path / "stack"
    directory.mkdir()
    env = StackEnv(hyops, directory)
    for name in ("network", "vm", "config", "health"):
        env.module(name)
    env.write()
    return env


@pytest.fixture
def applied(stack_env: StackEnv) -> StackEnv:
    """The demo stack applied ok."""
    result = stack_env.stack("apply", "stack/stack.yml")
    assert result.returncode == 0, result.stderr
    return stack_env
