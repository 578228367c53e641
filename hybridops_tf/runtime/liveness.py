"""Is the engine of an earlier run still alive? (issue 10, case 4)

Right after an engine is spawned, hyops writes `engine.json` into the run folder: the
engine's pid, host, boot id, `/proc` start time and run_id (never a secret). A `running`
record whose lock is free is normally stale (its hyops died); but while the engine that
hyops started still runs, the outcome is not settled yet, and `status`/`reconcile` must say
so instead of calling the record stale.

Alive means: same host and boot, and either the engine's pid exists with the same start time
(not a zombie), or a process of the engine's process group is left (the engine leads its
group, and provider plugins sit in it: a plugin that outlived its engine can still create).
A note written on another host cannot be checked from here and is reported as not alive:
the runtime root is local to one host (its lock is a local file lock), and an engine whose
hyops died is stopped within seconds anyway (the event relay's SIGTERM, then its
watchdog, see engine/relay.py), so a note from elsewhere names an engine that has stopped.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from hybridops_tf.base.files import atomic_write_text
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.runtime.run_folder import run_path

NOTE_NAME = "engine.json"
SCHEMA_VERSION = 1
_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class LiveEngine:
    pid: int
    host: str
    run_id: str
    since: str  # ISO-8601 Z

    def to_dict(self) -> dict[str, object]:
        return {"pid": self.pid, "host": self.host, "run_id": self.run_id, "since": self.since}


@dataclass(frozen=True, slots=True)
class _Stat:
    state: str
    pgid: int
    start_time: int  # clock ticks since boot


def _stat(pid: int) -> _Stat | None:
    """Fields of /proc/PID/stat, or None when there is no such process."""
    try:
        text = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    _, paren, rest = text.rpartition(")")  # the command name may hold spaces and ")"
    fields = rest.split()
    if not paren or len(fields) < 20:
        return None
    try:  # field 3 is state, 5 pgrp, 22 starttime (proc(5)); fields[0] is field 3
        return _Stat(state=fields[0], pgid=int(fields[2]), start_time=int(fields[19]))
    except ValueError:
        return None


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (None: no such process)."""
    st = _stat(pid)
    return st.start_time if st is not None else None


def boot_id() -> str | None:
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text(encoding="ascii").strip() or None
    except OSError:
        return None


def host_name() -> str:
    return os.uname().nodename


def write_note(run_dir: Path, pid: int, run_id: str) -> None:
    """Write run_dir/engine.json atomically: which process runs this run's engine."""
    doc = {
        "schema_version": SCHEMA_VERSION,
        "pid": pid,
        "host": host_name(),
        "boot_id": boot_id(),
        "start_time": start_time(pid),
        "run_id": run_id,
        "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    atomic_write_text(run_dir / NOTE_NAME, json.dumps(doc, indent=2) + "\n", durable=False)  # run_folder.RunFolder


def _group_survives(pgid: int, leader_start: int) -> bool:
    """A live process in process group pgid, started no earlier than its leader."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return False
    for name in names:
        if not name.isdigit():
            continue
        st = _stat(int(name))
        if st is not None and st.pgid == pgid and st.state not in ("Z", "X") and st.start_time >= leader_start:
            return True
    return False


def live_engine(runtime_root: Path, module_ref: str, run_id: str) -> LiveEngine | None:
    """The engine run_id started, if it (or a process of its group) still runs here."""
    note_path = run_path(runtime_root, module_ref, run_id) / NOTE_NAME
    try:
        doc = json.loads(note_path.read_text(encoding="utf-8"))
        pid, host, started = int(doc["pid"]), str(doc["host"]), int(doc["start_time"])
        note_run, since, note_boot = str(doc.get("run_id", run_id)), str(doc.get("since", "")), doc.get("boot_id")
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None  # no note (the engine never started, or an older hyops) or an unreadable one
    if pid <= 1 or host != host_name():
        return None
    if note_boot is not None and note_boot != boot_id():
        return None  # the machine rebooted since: every process of that boot is gone
    found = LiveEngine(pid=pid, host=host, run_id=note_run, since=since)
    st = _stat(pid)
    if st is not None and st.start_time != started:
        return None  # the pid was reused, so its old process group is gone too (Linux keeps a
        #              pid number allocated while any process still uses it as a group id)
    if st is not None and st.state not in ("Z", "X"):
        return found
    return found if _group_survives(pid, started) else None


def process_note(pid: int | None = None) -> dict[str, object]:
    """Who this process is, for a document others check with `process_alive` (a stack run
    report names its runner so: a run whose runner is gone never finished)."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "host": host_name(), "boot_id": boot_id(), "start_time": start_time(pid)}


def process_alive(note: object) -> bool | None:
    """Whether the process a `process_note` names still runs: None when that cannot be told
    from here (another host, or a note that does not say), False when it is gone (its pid is
    free or reused, or the machine rebooted since), True when it runs."""
    if not isinstance(note, dict):
        return None
    try:
        pid, host, started = int(note["pid"]), str(note["host"]), note.get("start_time")
    except (KeyError, TypeError, ValueError):
        return None
    if host != host_name() or pid <= 1:
        return None
    if note.get("boot_id") is not None and note.get("boot_id") != boot_id():
        return False
    st = _stat(pid)
    if st is None or st.state in ("Z", "X"):
        return False
    return started is None or st.start_time == started
