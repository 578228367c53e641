"""Watching and freezing real processes through /proc and signals, without product hooks.

The crash matrix times its kills from evidence only: files hyops writes, the engine child
hyops spawns (its argv in /proc), the provider's calls.jsonl. SIGSTOP freezes hyops at a
moment; what is then true on disk and in /proc says which phase it was frozen in, and
only then does SIGKILL land. Linux only (CI is Linux).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GENEROUS = 120.0  # seconds: a bound on waiting for an event, never a measured threshold


class NotReached(AssertionError):
    """An awaited event did not happen within the generous bound."""


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = GENEROUS,
               interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise NotReached(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def state(pid: int) -> str | None:
    """One-letter state from /proc/<pid>/stat (R, S, D, T, Z...), None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[0]


def ppid(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text.rsplit(")", 1)[1].split()[1])


def alive(pid: int) -> bool:
    return state(pid) not in (None, "Z", "X")


def children(pid: int) -> list[int]:
    """Direct children of pid (all its threads' children)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    for task in tasks:
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    env = {}
    for item in raw.split(b"\0"):
        key, eq, value = item.partition(b"=")
        if eq:
            env[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return env


def all_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def engine_child(hyops_pid: int, verb: str) -> int | None:
    """The live engine child of hyops running `verb` (apply, destroy, show, init...)."""
    for child in children(hyops_pid):
        argv = cmdline(child)
        if any(a.startswith("-chdir=") for a in argv) and verb in argv[1:] and alive(child):
            return child
    return None


def engine_pids(module_dir: Path, verbs: Iterable[str] = ()) -> list[int]:
    """Live engine processes for module_dir (any parent), optionally only these verbs."""
    marker = f"-chdir={module_dir}"
    wanted = set(verbs)
    pids = []
    for pid in all_pids():
        argv = cmdline(pid)
        if marker in argv and alive(pid) and (not wanted or wanted & set(argv[1:])):
            pids.append(pid)
    return pids


def top_level(pids: list[int]) -> list[int]:
    """Drop processes whose parent is in the list (a Go engine forking to start its provider
    briefly shows a child with the engine's own argv) and processes already gone (their
    parent can no longer be read, so they cannot be told apart from such a fork)."""
    parents = {p: ppid(p) for p in pids}
    found = {p for p, parent in parents.items() if parent is not None}
    return [p for p in found if parents[p] not in found and alive(p)]


def engine_pids_under(directory: Path) -> list[int]:
    """Live engine processes whose -chdir= module lies under directory."""
    prefix = f"-chdir={directory}/"
    return [pid for pid in all_pids()
            if any(a.startswith(prefix) for a in cmdline(pid)) and alive(pid)]


def provider_pids(sim_root: Path) -> list[int]:
    """Live sim provider plugins serving this sim root (they outlive a killed engine)."""
    pids = []
    for pid in all_pids():
        argv = cmdline(pid)
        if "hybridops_tf.sim" in argv and alive(pid):
            if environ(pid).get("HYOPS_SIM_ROOT") == str(sim_root):
                pids.append(pid)
    return pids


def wait_quiet(module_dir: Path, sim_root: Path, timeout: float = GENEROUS) -> None:
    """Wait until no engine for module_dir and no provider for sim_root is left running."""
    wait_until(lambda: not engine_pids(module_dir) and not provider_pids(sim_root),
               f"engine and provider processes of {module_dir} to end", timeout)


def stop(pid: int) -> None:
    """SIGSTOP pid and wait until the kernel reports it stopped (or gone)."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return  # it ended and was reaped (a poll loop's Popen.poll()): the caller sees it exited
    wait_until(lambda: state(pid) in ("T", "t", None, "Z"), f"pid {pid} to stop", 30, 0.0005)


def cont(pid: int) -> None:
    os.kill(pid, signal.SIGCONT)


def kill(pid: int) -> None:
    """SIGKILL (works on a stopped process too)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def blocked_opening_fifo(pid: int) -> bool:
    """True when a thread of pid sleeps in open() of a FIFO that has no reader yet (our trap).

    A thread's kernel wait channel is the FIFO open path (`fifo_open` / `wait_for_partner`)
    only while its open() has no partner; a stack run opens files from worker threads.
    """
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            wchan = (task / "wchan").read_text().strip()
        except OSError:
            continue
        if wchan in ("fifo_open", "wait_for_partner"):
            return True
    return False


def is_fifo(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(os.lstat(path).st_mode)
    except OSError:
        return False


def lock_holders(lock_file: Path) -> set[int]:
    """PIDs holding a flock on lock_file, from /proc/locks."""
    try:
        st = os.stat(lock_file)
    except OSError:
        return set()
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = set()
    for line in Path("/proc/locks").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == dev:
            holders.add(int(parts[4]))
    return holders


@dataclass
class Snapshot:
    """What was true while hyops was frozen: the evidence a kill point is judged by."""

    record_text: str | None
    record_status: str | None
    record_run_id: str | None
    engine_children: dict[int, list[str]]
    tmp_files: list[str]
    hyops_state: str | None
    blocked_on_fifo: bool

    def describe(self) -> dict[str, Any]:
        return {
            "record_status": self.record_status,
            "record_run_id": self.record_run_id,
            "engine_children": sorted({" ".join(a[2:3]) for a in self.engine_children.values()}),
            "tmp_files": self.tmp_files,
            "hyops_state": self.hyops_state,
            "blocked_on_fifo": self.blocked_on_fifo,
        }


def snapshot(hyops_pid: int, record_path: Path) -> Snapshot:
    try:
        text = record_path.read_text()
    except OSError:
        text = None
    status = run_id = None
    if text is not None:
        try:
            doc = json.loads(text)
            status, run_id = doc.get("status"), doc.get("run_id")
        except ValueError:
            status = "<invalid json>"
    engines = {c: cmdline(c) for c in children(hyops_pid) if alive(c)}
    try:
        tmps = sorted(n for n in os.listdir(record_path.parent)
                      if n.startswith(f".{record_path.name}.") and n.endswith(".tmp"))
    except OSError:
        tmps = []
    return Snapshot(text, status, run_id, engines, tmps, state(hyops_pid),
                    blocked_opening_fifo(hyops_pid))
