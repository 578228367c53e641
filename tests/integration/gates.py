"""File gates for the sim `hang` fault: hold a provider call open exactly as long as a test
needs, instead of a number of seconds that a loaded machine may or may not honour.

    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_vm", op="create")])
    proc = hyops.start("apply", ...)
    gate.wait_started()        # the provider is parked inside the create
    ...                        # the window: as long as the test likes
    gate.release()             # the create proceeds

A gate that is never released bounds the hang at `seconds` (600 unless given); a test that
keeps it shut on purpose still releases it in its `finally`, so no provider outlives it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.integration.hyops_cli import engine_processes, wait_for


@dataclass(frozen=True)
class Gate:
    started: Path
    until: Path

    @classmethod
    def at(cls, directory: Path, name: str = "gate") -> Gate:
        return cls(directory / f"{name}.started", directory / f"{name}.release")

    def rule(self, **fields: Any) -> dict[str, Any]:
        """A `hang` fault rule on this gate (`type`, `op`, `name`, `at`, ... as given)."""
        return {"mode": "hang", **fields, "hang_until": str(self.until), "hang_started": str(self.started)}

    def wait_started(self, proc: subprocess.Popen[str] | None = None, timeout: float = 120.0) -> dict[str, Any]:
        """Block until the provider began hanging; its signal (pid, op, type, name, time).

        With `proc` (the hyops run expected to reach the hang), fail at once, with its
        output, if it ends first."""
        wait_for(lambda: self.started.exists() or (proc is not None and proc.poll() is not None),
                 timeout=timeout, what=f"the hang to start ({self.started.name})")
        if not self.started.exists():
            assert proc is not None
            out, err = proc.communicate()
            raise AssertionError(f"hyops exited {proc.returncode} before the hang started:\n{out}\n{err}")
        return json.loads(self.started.read_text())

    def release(self) -> None:
        self.until.touch()

    @property
    def is_started(self) -> bool:
        return self.started.exists()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_engines(module_dir: Path, provider_pid: int | None = None) -> None:
    """SIGKILL every engine still running for module_dir (as a runner killing the whole
    tree would), then wait until they, and the gated provider if named, are gone."""
    for pid in engine_processes(module_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_for(lambda: engine_processes(module_dir) == [], what="the killed engine to be gone")
    if provider_pid is not None:  # it ends itself once its engine is gone
        wait_for(lambda: not _alive(provider_pid), what=f"the provider pid {provider_pid} to end")
