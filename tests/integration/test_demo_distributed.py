"""`make demo-distributed` (scripts/demo_distributed.py) end to end, as a user runs it: its own
private PostgreSQL cluster, three workers, one SIGKILLed while the cloud holds its member's
create at a gate. And its clean-up when it is stopped half-way: no worker, engine, provider or
server outlives it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.hyops_cli import wait_for
from tests.pgcluster import available

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "demo_distributed.py"


def demo(tmp_path: Path) -> subprocess.Popen[str]:
    reason = available()
    if reason is not None:
        pytest.skip(reason)
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # its work folder (and the engines' logs) under tmp_path
    return subprocess.Popen([sys.executable, str(SCRIPT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def processes_under(folder: Path) -> list[str]:
    """Live processes working in, or naming, a path under folder (workers, engines, providers,
    the PostgreSQL server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(folder)) or str(folder) in cmdline:
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found


def test_the_demo_kills_one_of_three_workers_reports_its_member_lost_and_recovers_as_reconcile_says(
    tmp_path: Path,
) -> None:
    proc = demo(tmp_path)
    out = proc.communicate(timeout=900)[0]

    assert proc.returncode == 0, out[-4000:]
    killed = re.search(r"== 4\. Runner (ci-\d) vanishes", out)
    assert killed is not None, out[-4000:]
    assert f"✓ vm: interrupted: worker {killed[1]} lost" in out
    assert "✓ config and health never ran: pending, blocked by vm" in out
    assert "$ hyops reconcile --stack modules/stack.yml\n" in out
    assert "✓ no vm was created twice" in out and "✓ the cloud is empty" in out
    assert "✗" not in out.split("== 7.")[1]  # after reconcile's advice, nothing failed
    assert re.search(r"\(the private PostgreSQL server on port \d+ is stopped\)", out)
    assert list(tmp_path.glob("hyops-demo-distributed-*")) == [] and processes_under(tmp_path) == []


def test_the_demo_stopped_half_way_leaves_no_worker_or_server_running(tmp_path: Path) -> None:
    proc = demo(tmp_path)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # until all three workers run
        seen.append(line)
        if "hyops stack work --until-idle --name ci-3" in line:
            break
    else:
        pytest.fail("".join(seen[-40:]))
    proc.send_signal(signal.SIGTERM)
    out = "".join(seen) + proc.communicate(timeout=300)[0]

    assert proc.returncode == 128 + signal.SIGTERM, out[-4000:]
    assert re.search(r"\(the private PostgreSQL server on port \d+ is stopped\)", out)
    wait_for(lambda: processes_under(tmp_path) == [], timeout=120, what="nothing left running under the demo's folder")
    assert list(tmp_path.glob("hyops-demo-distributed-*")) == []
