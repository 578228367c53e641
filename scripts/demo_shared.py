"""`make demo-shared`: the two-runner story of the shared PostgreSQL store (issue #12).

CI runners come and go. Runner A applies the demo stack and is killed with its whole process
group in the middle of the vm's create; its checkout and its .hyops/ go with it. Runner B, a
fresh checkout elsewhere, finds everything recovery needs in the store (records, locks, the
killed run's journal, the engine's state through its `pg` backend), adopts the vm A's create
made, and converges without creating anything twice. Then two runners apply one module at
once: the second is refused (exit 4) naming the first. Every command is printed as a user
types it, with its output and exit code, as `make demo` does.

The server is a private PostgreSQL cluster started by the test suite's tests/pgcluster.py
(Debian's PostgreSQL binaries, a free loopback port, a random password): fine for a demo on
this machine, stopped at the end whatever happens. The runners get the store's URL (no
password in it) through HYOPS_STORE and the password through PGPASSWORD only; the password is
never printed. Everything else lives in a temp dir, removed at the end.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from demo import HYOPS, say, test_engine  # noqa: E402

from tests.integration.gates import Gate, kill_engines  # noqa: E402
from tests.integration.hyops_cli import wait_for  # noqa: E402
from tests.integration.shared_store import SharedStore  # noqa: E402
from tests.pgcluster import PgCluster, database_name  # noqa: E402

DEMO = Path(sys.argv[0]).stem.replace("_", "-")  # failures name the demo that imports these helpers

STACK = "modules/stack.yml"
MEMBERS = ("network", "vm", "config", "health")
PG_BACKEND = 'terraform {\n  backend "pg" {}\n}\n'


@dataclass
class Runner:
    """One CI runner: its own checkout and runtime root; the store and the cloud are shared."""

    name: str
    root: Path
    env: dict[str, str]


def new_runner(name: str, work: Path, shared_env: dict[str, str]) -> Runner:
    root = work / ("runner-" + name.lower().replace("'", "2"))
    shutil.copytree(REPO / "modules/sim", root / "modules", ignore=shutil.ignore_patterns(
        ".terraform", ".terraform.lock.hcl", "*.tfstate*"))
    for member in MEMBERS:  # the engine's state lives in the store's database too
        (root / "modules" / member / "backend.tf").write_text(PG_BACKEND)
    env = {**os.environ, **shared_env, "HYOPS_RUNTIME_ROOT": str(root / ".hyops")}
    print(f"runner {name}: checkout {root}, runtime root {root / '.hyops'}", flush=True)
    return Runner(name, root, env)


def run(r: Runner, *args: str, expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    print(f"[{r.name}] $ hyops {shlex.join(args)}", flush=True)
    proc = subprocess.run([HYOPS, *args], cwd=r.root, env=r.env, text=True, check=False,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    show(proc.stdout, proc.returncode)
    if expect is not None and proc.returncode != expect:
        sys.exit(f"{DEMO}: expected exit {expect} from `hyops {shlex.join(args)}` "
                 f"on runner {r.name}, got {proc.returncode}")
    return proc


def check(condition: bool, what: str) -> None:
    print(f"  {'✓' if condition else '✗'} {what}", flush=True)
    if not condition:
        sys.exit(f"{DEMO}: {what}: not so")


def show(output: str, code: int | None) -> None:
    if output.strip():
        print(textwrap.indent(output.rstrip(), "  "), flush=True)
    print(f"  (exit {code})", flush=True)


def read_json(r: Runner, *args: str) -> dict:
    """A command's --json output, read by the demo itself (not printed)."""
    proc = subprocess.run([HYOPS, *args, "--json"], cwd=r.root, env=r.env, text=True,
                          capture_output=True, check=False, timeout=600)
    return json.loads(proc.stdout)


def start_job(r: Runner, *args: str) -> subprocess.Popen[str]:
    """A CI job: hyops in its own process group, so the runner can kill the whole group."""
    print(f"[{r.name}] $ hyops {shlex.join(args)} &", flush=True)
    return subprocess.Popen([HYOPS, *args], cwd=r.root, env=r.env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def vm_create_journaled(store: SharedStore) -> bool:
    rec = store.record("demo/vm")
    return bool(rec) and rec["status"] == "running" and any(
        e.get("type") == "apply_start" and e["hook"]["resource"]["addr"] == "sim_vm.this"
        for e in store.journal_events("demo/vm", rec["run_id"]))


def sim_vms(r: Runner) -> list[str]:
    return [o["id"] for o in read_json(r, "sim", "ls")["objects"] if o["type"] == "sim_vm"]


def write_faults(path: Path, rule: dict) -> None:
    path.write_text(json.dumps([rule], indent=1) + "\n")  # JSON is YAML; a write starts a new run


def runner_a_is_killed(a: Runner, store: SharedStore, gate: Gate) -> None:
    say("3. Runner A applies the stack; the cloud holds the vm's create open (a hang gate)")
    job = start_job(a, "stack", "apply", STACK)
    try:
        provider = gate.wait_started(job)
        wait_for(lambda: vm_create_journaled(store), what="the vm's apply_start in the journal")
        print("  (the vm's create is under way: its apply_start is in the store's journal)")
        say("   runner A is killed with its process group mid-create")
        os.killpg(job.pid, signal.SIGKILL)
        kill_engines(a.root / "modules" / "vm", provider["pid"])
        out, _ = job.communicate(timeout=60)
        print(f"[{a.name}] (what the job printed before it died)", flush=True)
        show(out, job.returncode)
    finally:
        gate.release()
    shutil.rmtree(a.root)
    print(f"  the runner is gone: {a.root} (checkout and .hyops/) deleted", flush=True)


def runner_b_recovers(b: Runner) -> None:
    say("4. Runner B, a fresh checkout, sees what A left, from the store alone")
    run(b, "status", "--all", expect=3)
    run(b, "reconcile", "--stack", STACK, expect=3)
    say("   What is live in the cloud: the vm A's create made")
    run(b, "sim", "ls")
    vms = adopt_the_lost_vm(b)
    say("   Resume: what is ok is skipped, the rest runs")
    run(b, "stack", "apply", STACK, "--resume")
    run(b, "reconcile", "--stack", STACK)
    check(sim_vms(b) == vms, f"no vm was created twice: still only {vms[0]}")


def adopt_the_lost_vm(r: Runner) -> list[str]:
    """Follow reconcile's advice to the letter: import the one live vm a killed create made
    into demo/vm, then settle its stale `running` record; the vm's id, alone in a list."""
    vms = sim_vms(r)
    check(len(vms) == 1, f"exactly one vm is live: {vms}")
    found = {m["module_ref"]: m for m in read_json(r, "reconcile", "--stack", STACK)["modules"]}
    vm = {f["code"]: f for f in found["demo/vm"]["findings"]}
    adopt = next(alt["command"] for alt in vm["suspect_orphan"]["alternatives"]
                 if "--import" in alt["command"])
    say("   Follow reconcile's advice: adopt the live vm, then settle the stale record")
    run(r, *shlex.split(adopt.replace("<id>", vms[0]))[1:])
    run(r, *shlex.split(vm["stale_running"]["next_actions"][0])[1:])
    return vms


def two_runners_at_once(a2: Runner, b: Runner, gate: Gate) -> None:
    say("5. Two runners apply the same module at once (A' is held in its refresh by a gate)")
    job = start_job(a2, "apply", "modules/network", "--ref", "demo/network")
    try:
        gate.wait_started(job)
        refused = run(b, "apply", "modules/network", "--ref", "demo/network", expect=4)
        check(f"pid {job.pid}" in refused.stdout, f"the refusal names the holder (pid {job.pid})")
        run(b, "store", "status")
    finally:
        gate.release()
    out, _ = job.communicate(timeout=600)
    print(f"[{a2.name}] (the first apply, once the gate opens)", flush=True)
    show(out, job.returncode)
    if job.returncode != 0:
        sys.exit(f"demo-shared: expected exit 0 from runner {a2.name}'s apply, got {job.returncode}")
    shutil.rmtree(a2.root)


def private_store(work: Path, extra: dict[str, str] | None = None) -> tuple[PgCluster, SharedStore, dict[str, str]]:
    """A private cluster and the store's database in it, and the environment every runner
    shares (engine, cloud, faults file work/faults.yml, the store, `extra`), printed as a user
    exports it (the password never)."""
    cluster = PgCluster.start(work)  # stopped at interpreter exit too, should what follows fail
    dbname = database_name(DEMO.replace("-", "_"))
    cluster.create_database(dbname)
    store = SharedStore(cluster, f"{cluster.url(dbname)}?sslmode=disable", dbname)
    shared_env = {"HYOPS_ENGINE": test_engine(), "HYOPS_SIM_ROOT": str(work / "cloud"),
                  "HYOPS_SIM_FAULTS": str(work / "faults.yml"), **store.env(), **(extra or {})}
    print(f"engine: {shared_env['HYOPS_ENGINE']}\nexport HYOPS_STORE='{store.url}'\n"
          "export PGPASSWORD=... (the password travels only in the environment)", flush=True)
    for name, value in (extra or {}).items():
        print(f"export {name}={value}", flush=True)
    return cluster, store, shared_env


def tear_down(cluster: PgCluster | None, work: Path) -> None:
    """The demo's last step, whatever happened: the server stopped, its temp dir removed."""
    if cluster is not None:
        cluster.stop()
        print(f"(the private PostgreSQL server on port {cluster.port} is stopped)", flush=True)
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="hyops-demo-shared-"))
    cluster: PgCluster | None = None
    try:
        say("1. A private PostgreSQL server and a database for the store")
        cluster, store, shared_env = private_store(work)
        faults = work / "faults.yml"

        say("2. Two runners, two checkouts, two runtime roots; one store, one cloud")
        kill_gate, lock_gate = Gate.at(work, "vm-create"), Gate.at(work, "network-read")
        write_faults(faults, kill_gate.rule(type="sim_vm", op="create", at="after", times=1))
        a, b = new_runner("A", work, shared_env), new_runner("B", work, shared_env)
        run(b, "store", "init")

        runner_a_is_killed(a, store, kill_gate)
        runner_b_recovers(b)

        write_faults(faults, lock_gate.rule(type="sim_network", op="read", times=1))
        two_runners_at_once(new_runner("A'", work, shared_env), b, lock_gate)

        say("6. Tear down from B; each destroy is verified against the state in the store")
        run(b, "stack", "destroy", STACK)
        check("no live objects" in run(b, "sim", "ls").stdout, "the cloud is empty")
        run(b, "store", "status")
        say("Done. The story's records and journals were in PostgreSQL; no runner kept them.")
    finally:
        for gate in (work / "vm-create.release", work / "network-read.release"):
            gate.touch()  # no provider outlives the demo
        tear_down(cluster, work)


if __name__ == "__main__":
    main()
