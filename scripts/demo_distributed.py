"""`make demo-distributed`: one stack run by three CI runners from one queue (issue 36).

One job queues the demo stack (network -> vm -> config -> health) in the shared PostgreSQL
store; three runners, each its own checkout and runtime root, run `hyops stack work
--until-idle` against it. The cloud holds the vm's create open once the vm is made (a gate
file, not a sleep), and the runner holding it is killed with its whole process group. The
others notice its heartbeat stop, report the vm `interrupted: worker NAME lost` with config
and health pending behind it, never run it again by themselves, and exit once nothing is
left they could take. `hyops stack status` shows who ran what; `hyops reconcile` says what
to do; its advice, followed to the letter, adopts the one vm, and a queued `--resume` run
finishes the stack on the two runners left. Every command is printed as a user types it,
with its output and exit code, as `make demo-shared` does (whose helpers this reuses).

The server is a private PostgreSQL cluster (tests/pgcluster.py), stopped at the end, as are
the workers, whatever happens (an error, Ctrl-C or SIGTERM). The heartbeat is short here
(HYOPS_QUEUE_HEARTBEAT=1, HYOPS_QUEUE_LOST_AFTER=5) so the loss shows within seconds.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from demo import say  # noqa: E402
from demo_shared import (  # noqa: E402
    STACK,
    Runner,
    adopt_the_lost_vm,
    check,
    new_runner,
    private_store,
    read_json,
    run,
    show,
    sim_vms,
    start_job,
    tear_down,
    vm_create_journaled,
    write_faults,
)

from tests.integration.gates import Gate, kill_engines  # noqa: E402
from tests.integration.hyops_cli import wait_for  # noqa: E402
from tests.integration.shared_store import SharedStore  # noqa: E402
from tests.pgcluster import PgCluster  # noqa: E402

HEARTBEAT = {"HYOPS_QUEUE_HEARTBEAT": "1", "HYOPS_QUEUE_LOST_AFTER": "5"}
NAMES = ("ci-1", "ci-2", "ci-3")
STOP_WAIT = 60.0  # seconds a worker stopped by the demo's own end gets to settle


def _stop_on_sigterm(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # so `finally` stops the workers and the cluster


def stop(job: subprocess.Popen[str]) -> None:
    """A worker still running when the demo ends early: SIGTERM (it stops its engines and lets
    its member settle), SIGKILL to its group if it has not exited within STOP_WAIT seconds."""
    if job.poll() is not None:
        return
    job.send_signal(signal.SIGTERM)
    try:
        job.communicate(timeout=STOP_WAIT)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()


def work(r: Runner, *args: str) -> subprocess.Popen[str]:
    return start_job(r, "stack", "work", "--until-idle", "--name", r.name, *args)


def finish(r: Runner, job: subprocess.Popen[str], expect: int = 0) -> str:
    out, _ = job.communicate(timeout=600)
    print(f"[{r.name}] (the worker's output)", flush=True)
    show(out, job.returncode)
    check(job.returncode == expect, f"worker {r.name} exited {expect}")
    return out


def vm_holder(store: SharedStore, run_id: str) -> str:
    return store.sql(f"SELECT coalesce(worker, '') FROM hyops.queue_members WHERE run_id = '{run_id}' "
                     "AND name = 'vm'").strip()


def members(r: Runner) -> dict[str, dict]:
    return {m["name"]: m for m in read_json(r, "stack", "status", STACK)["members"]}


def one_is_killed(runners: dict[str, Runner], store: SharedStore, gate: Gate, jobs: dict[str, subprocess.Popen[str]],
                  run_id: str) -> Runner:
    """Wait for the runner whose worker holds the vm's create, and kill it; that runner."""
    provider = gate.wait_started(timeout=300)
    holder = runners[wait_for(lambda: vm_holder(store, run_id), what="the vm's worker")]
    wait_for(lambda: vm_create_journaled(store), what="the vm's apply_start in the store's journal")
    print(f"  (worker {holder.name} runs the vm; the cloud made it and holds the answer back)", flush=True)
    say(f"4. Runner {holder.name} vanishes: SIGKILL to its whole process group, mid-member")
    os.killpg(jobs[holder.name].pid, signal.SIGKILL)
    kill_engines(holder.root / "modules" / "vm", provider["pid"])
    gate.release()
    finish(holder, jobs.pop(holder.name), expect=-signal.SIGKILL)
    return holder


def the_rest_finish(runners: dict[str, Runner], jobs: dict[str, subprocess.Popen[str]], holder: Runner) -> Runner:
    say(f"5. The other two see {holder.name}'s heartbeat stop ({HEARTBEAT['HYOPS_QUEUE_LOST_AFTER']}s): the vm is\n"
        "   interrupted, config and health can never start, so they go idle and exit")
    for name in list(jobs):
        finish(runners[name], jobs.pop(name))
    return next(r for r in runners.values() if r is not holder)


def the_run_as_recorded(r: Runner, holder: Runner) -> None:
    say(f"6. Where the run stands, from runner {r.name}: which worker ran what, and how it ended")
    run(r, "stack", "status", STACK, expect=3)  # 3: the vm's record is a stale `running`, uncertain
    shown = members(r)
    check(shown["network"]["status"] == "ok" and shown["network"]["worker"] in NAMES,
          f"network is ok, run by {shown['network']['worker']}")
    vm = shown["vm"]
    check(vm["status"] == "interrupted" and vm["worker"] == holder.name
          and f"worker {holder.name} lost" in (vm.get("error") or ""),
          f"vm: interrupted: worker {holder.name} lost")
    check(all(shown[n]["status"] == "pending" and shown[n]["blocked_by"] == "vm" for n in ("config", "health")),
          "config and health never ran: pending, blocked by vm")
    say("   The queue never runs the vm again by itself: reconcile decides, as after any kill")
    run(r, "reconcile", "--stack", STACK, expect=3)
    run(r, "sim", "ls")


def resume_from_the_queue(r: Runner, others: list[Runner], vms: list[str],
                          jobs: dict[str, subprocess.Popen[str]]) -> None:
    say("8. Queue the rest (--resume): the two runners left take it")
    run_id = run(r, "stack", "apply", STACK, "--queue", "--resume").stdout.split()[-1]
    jobs.update({o.name: work(o, "--run", run_id) for o in others})
    for o in others:
        finish(o, jobs.pop(o.name))
    run(r, "stack", "status", STACK)
    shown = members(r)
    check(all(shown[n]["status"] in ("ok", "skipped") for n in shown), "every member is ok (or skipped: unchanged)")
    check(sim_vms(r) == vms, f"no vm was created twice: still only {vms[0]}")


def main() -> None:
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    work_dir = Path(tempfile.mkdtemp(prefix="hyops-demo-distributed-"))
    cluster: PgCluster | None = None
    jobs: dict[str, subprocess.Popen[str]] = {}
    gate = Gate.at(work_dir, "vm-create")
    try:
        say("1. A private PostgreSQL server: the store, and the queue in the same database")
        cluster, store, shared_env = private_store(work_dir, HEARTBEAT)
        faults = work_dir / "faults.yml"

        say("2. Three CI runners: three checkouts, three runtime roots; one store, one queue, one cloud")
        runners = {name: new_runner(name, work_dir, shared_env) for name in NAMES}
        first = runners[NAMES[0]]
        run(first, "store", "init")
        write_faults(faults, gate.rule(type="sim_vm", op="create", at="after", times=1))
        print("  (the cloud will hold the vm's create open once the vm is made: a gate file)", flush=True)

        say("3. One job queues the stack; each runner starts a worker")
        run_id = run(first, "stack", "apply", STACK, "--queue").stdout.split()[-1]  # its last line
        jobs.update({name: work(r) for name, r in runners.items()})
        print("  (the demo stack is a chain: one member is ready at a time, and a free worker takes it)",
              flush=True)

        holder = one_is_killed(runners, store, gate, jobs, run_id)
        shutil.rmtree(holder.root)
        print(f"  the runner is gone: {holder.root} (checkout and .hyops/) deleted", flush=True)
        survivor = the_rest_finish(runners, jobs, holder)
        the_run_as_recorded(survivor, holder)

        say("7. Do what reconcile says")
        vms = adopt_the_lost_vm(survivor)
        resume_from_the_queue(survivor, [r for r in runners.values() if r is not holder], vms, jobs)

        say("9. Tear down; each destroy is verified against the state in the store")
        run(survivor, "stack", "destroy", STACK)
        check("no live objects" in run(survivor, "sim", "ls").stdout, "the cloud is empty")
        say("Done. One run, three runners, one lost: the store said who ran what and what to do next.")
    finally:
        gate.until.touch()  # no provider outlives the demo
        for job in jobs.values():
            stop(job)
        tear_down(cluster, work_dir)


if __name__ == "__main__":
    main()
