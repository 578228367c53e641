"""Instructions a command's own process executes, counted by valgrind's callgrind: the same
count on a busy machine as on a quiet one, where wall and CPU time are not (the machines
this project is measured on are shared). Only the process started is counted, with its
threads, not the processes it starts (the engine): hyops's own share.

Off when valgrind is not on PATH or HYOPS_BENCH_CALLGRIND=0; a command under callgrind runs
~50x slower, so the benches count each command once, beside their timed rounds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path


def available() -> bool:
    return os.environ.get("HYOPS_BENCH_CALLGRIND", "1") != "0" and shutil.which("valgrind") is not None


def instructions(argv: Sequence[str], env: dict[str, str], cwd: Path, ok: Sequence[int] = (0,)) -> int:
    """Instructions `argv`'s process executed (callgrind's `Collected`), its children not counted."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv], env=env,
                          cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode not in ok or found is None:
        raise RuntimeError(f"`{' '.join(argv)}` under callgrind exited {proc.returncode}: {proc.stderr[-1500:]}")
    return int(found[1])
