"""File gates for the sim `hang` fault: hold a provider call open exactly as long as a test
needs, instead of a number of seconds that a loaded machine may or may not honour.

    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_vm", op="create")])
    proc = hyops.start("apply", ...)
    gate.wait_started(proc)    # the provider is parked inside the create (fails fast if it never will)
    ...                        # the window: as long as the test likes
    gate.release()             # the create proceeds

A gate that is never released bounds the hang at `seconds` (600 unless given); a test that
keeps it shut on purpose still releases it in its `finally`, so no provider outlives it.

A gate that is never reached fails the wait within seconds, saying what was seen, rather
than after a timeout: pass the run to `wait_started`, and it fails as soon as that run has
exited (its exit code and the tail of its output), or at once when the run's faults file
has no rule that parks on this gate (nothing will ever reach it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.integration.hyops_cli import engine_processes, wait_for

FAULTS_ENV = "HYOPS_SIM_FAULTS"
POLL_SECONDS = 0.05
TAIL_LINES = 15
DRAIN_SECONDS = 10.0  # reading an exited run's pipes: a child it left may still hold them open


class GateNotReached(AssertionError):
    """The provider never parked on the gate, and what the test saw instead."""


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

    def wait_started(self, proc: subprocess.Popen[Any] | None = None, timeout: float = 120.0, *,
                     output: Path | None = None) -> dict[str, Any]:
        """Block until the provider began hanging; its signal (pid, op, type, name, time).

        `proc` is the hyops run expected to reach the hang (`output`: the file its output
        goes to, when not a pipe). With it, the wait fails at once when the run's faults file
        has no rule parking on this gate, and as soon as the run has exited otherwise, with
        its exit code and the tail of its output. Without it, or while the run lives on
        (parked at another gate, say), the wait ends at `timeout`."""
        if proc is not None:
            self._check_some_rule_parks_here(proc)
        deadline = time.monotonic() + timeout
        while True:
            if self.started.exists():
                return json.loads(self.started.read_text())
            if proc is not None and proc.poll() is not None:
                if self.started.exists():  # reached just before the run ended
                    return json.loads(self.started.read_text())
                raise GateNotReached(f"{self.started.name} was never reached: hyops (pid {proc.pid}) "
                                     f"exited {proc.returncode} first\n{_output_tail(proc, output)}"
                                     f"{self._others_started()}")
            if time.monotonic() >= deadline:
                alive = f"; hyops (pid {proc.pid}) is still running" if proc is not None else ""
                raise GateNotReached(f"{self.started.name} was not reached within {timeout:g}s{alive}"
                                     f"{self._others_started()}")
            time.sleep(POLL_SECONDS)

    def _check_some_rule_parks_here(self, proc: subprocess.Popen[Any]) -> None:
        """Fail now when the faults file the run was started with names no rule whose hang
        starts this gate. A file that cannot be read here is left to the wait itself."""
        faults = _faults_file_of(proc.pid)
        if faults is None:
            return
        try:
            doc = yaml.safe_load(faults.read_text())
        except (OSError, yaml.YAMLError):
            return
        rules = doc.get("rules") if isinstance(doc, dict) else doc
        if not isinstance(rules, list):
            return
        gates = [Path(os.path.normpath(faults.parent / str(r["hang_started"]))) for r in rules
                 if isinstance(r, dict) and r.get("hang_started")]
        if Path(os.path.normpath(os.path.abspath(self.started))) not in gates:
            raise GateNotReached(
                f"{self.started.name} can never be reached: no rule of {faults} (hyops pid {proc.pid}) "
                f"parks on it; its rules park on {[str(g) for g in gates] or 'no gate at all'}")

    def _others_started(self) -> str:
        """The other gates of this folder the provider did park on, if any (a wrong gate)."""
        others = sorted(p.name for p in self.started.parent.glob("*.started") if p != self.started)
        return f"\nother gates here that did start: {', '.join(others)}" if others else ""

    def release(self) -> None:
        self.until.touch()

    @property
    def is_started(self) -> bool:
        return self.started.exists()


def _faults_file_of(pid: int) -> Path | None:
    """The faults file a process was started with (its HYOPS_SIM_FAULTS, absolute), if any."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None  # it already ended: the wait reports how
    prefix = f"{FAULTS_ENV}=".encode()
    value = next((item[len(prefix):] for item in environ if item.startswith(prefix)), None)
    if not value:
        return None
    return cwd / os.fsdecode(value)


def _output_tail(proc: subprocess.Popen[Any], output: Path | None) -> str:
    """The last lines of an exited run's stderr (and stdout), from its pipes or `output`."""
    if output is not None:
        try:
            text = output.read_text(errors="replace")
        except OSError as err:
            return f"(its output file {output} cannot be read: {err})"
        return f"output (tail of {output}):\n{_tail(text)}"
    if proc.stdout is None and proc.stderr is None:
        return "(its output was not captured)"
    try:
        out, err = proc.communicate(timeout=DRAIN_SECONDS)
    except subprocess.TimeoutExpired:
        return f"(its output is still held open after {DRAIN_SECONDS:g}s by a process it left behind)"
    return f"stderr (tail):\n{_tail(_text(err))}\nstdout (tail):\n{_tail(_text(out))}"


def _text(data: str | bytes | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return data or ""


def _tail(text: str) -> str:
    lines = text.rstrip("\n").splitlines()[-TAIL_LINES:]
    return "\n".join(f"  {line}" for line in lines) if lines else "  (empty)"


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
