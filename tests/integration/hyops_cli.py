"""Drive the real `hyops` console script against the real engine and the sim cloud.

Tests go through the documented interface only (argv, exit codes, files under the
runtime root), as a user or a CI job would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HYOPS = str(Path(sys.executable).with_name("hyops"))


@dataclass
class Hyops:
    """`hyops` bound to one test's workdir, runtime root, engine and sim root."""

    workdir: Path
    runtime_root: Path
    engine: str
    sim_root: Path
    extra_env: dict[str, str]
    store: Any = None  # a SharedStore (shared_store.py) or a SqliteFile (sqlite_store.py): records not in files

    def env(self, **more: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "HYOPS_ENGINE": self.engine,
            "HYOPS_RUNTIME_ROOT": str(self.runtime_root),
            "HYOPS_SIM_ROOT": str(self.sim_root),
        })
        env.update(self.extra_env)
        env.update(more)
        return env

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([HYOPS, *args], cwd=self.workdir, env=self.env(**(env or {})),
                              capture_output=True, text=True, timeout=300)
        assert "Traceback (most recent call last)" not in done.stderr, (
            f"hyops {' '.join(args)} printed a Python traceback:\n{done.stderr}")
        return done

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen([HYOPS, *args], cwd=self.workdir, env=self.env(**(env or {})),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def record_path(self, ref: str) -> Path:
        assert self.store is None, "a record file exists only on the local store: this cannot be a both_stores test"
        return self.runtime_root / "state" / "modules" / ref.replace("/", "__") / "latest.json"

    def record(self, ref: str) -> dict[str, Any] | None:
        """The record of `ref` (a record key) as stored, on whichever store the test uses."""
        if self.store is not None:
            return self.store.record(ref)
        path = self.record_path(ref)
        return json.loads(path.read_text()) if path.exists() else None

    def write_record(self, ref: str, doc: dict[str, Any]) -> None:
        """Replace the stored record of `ref` (a forged state for a test), on either store."""
        if self.store is not None:
            self.store.write_record(ref, doc)
        else:
            self.record_path(ref).write_text(json.dumps(doc))

    def sim_objects(self) -> list[dict[str, Any]]:
        out = self("sim", "ls", "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["objects"]

    def sim_calls(self) -> list[dict[str, Any]]:
        path = self.sim_root / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(predicate: Callable[[], Any], timeout: float = 300.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def engine_processes(module_dir: Path) -> list[int]:
    """PIDs of live engine processes started for module_dir (found by their -chdir= arg)."""
    marker = f"-chdir={module_dir}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker in cmdline.split(b"\0") and ") Z " not in stat:
            pids.append(int(entry.name))
    return pids


def interrupt(proc: subprocess.Popen[str], sig: int = signal.SIGINT) -> None:
    proc.send_signal(sig)
