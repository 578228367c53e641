"""`make mutants`: break each guarded rule on purpose and check that its tests notice.

A test that cannot fail is a defect. Each mutant below is the smallest change that breaks one
rule of the contract (a flipped condition, a dropped write, a skipped fsync); the script
applies it to a scratch copy of the repository, runs only the tests named as its guards
against that copy, and expects them to FAIL. A mutant the guards let pass is a survivor: the
rule has no test that holds it, and the script exits 1 naming it.

    .venv/bin/python scripts/mutants.py            # every mutant
    .venv/bin/python scripts/mutants.py -k fsync   # those whose name contains "fsync"

Adding a rule to the contract: add its mutant here with the test that guards it
(CONTRIBUTING.md). The scratch copy is imported ahead of the installed package through
PYTHONPATH, which every `hyops` and provider process the tests start inherits.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns(".venv", ".git", ".hyops", "__pycache__", ".pytest_cache", ".terraform",
                                 "*.tfstate*", ".terraform.lock.hcl")


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository
    old: str  # must occur exactly once
    new: str
    guards: tuple[str, ...]  # pytest arguments selecting the tests that must catch it


MUTANTS = (
    Mutant("destroy trusts exit 0 without an empty state", "hybridops_tf/operation/settle.py",
           "    if evidence.state.is_empty:\n", "    if True:\n",
           ("tests/integration/test_destroy_leftovers.py", "-k", "local")),
    Mutant("atomic write skips the directory fsync", "hybridops_tf/base/files.py",
           "        fsync_dir(self.path.parent)\n", "        pass\n",
           ("tests/unit/test_durable_write_order.py",)),
    Mutant("shared store writes without holding the lock", "hybridops_tf/store/postgres.py",
           "                if not held:\n", "                if False:\n",
           ("tests/integration/test_shared_store_lock_check.py",)),
    Mutant("a second ref takes over another ref's state", "hybridops_tf/operation/places.py",
           "    if not others:\n", "    if True:\n",
           ("tests/integration/test_refs_share_state.py", "-k", "refused")),
    Mutant("a place marker lets any ref skip the shared-state check", "hybridops_tf/operation/places.py",
           "    elif _marker_ref(marker) == target.ref:\n", "    elif _marker_ref(marker) is not None:\n",
           ("tests/unit/test_places.py", "tests/integration/test_refs_share_state.py", "-k",
            "scan or refused")),
    Mutant("--forget-record drops a record whose state is its own", "hybridops_tf/reconcile/retire.py",
           "        if not (mine and now_shared):  # mine: it claims something, where it says it is\n",
           "        if False:\n",
           ("tests/integration/test_refs_share_state.py", "-k", "forget_record_is_refused")),
    Mutant("stack runs over an uncertain member", "hybridops_tf/stack/runner.py",
           "        if why:\n", "        if False:\n",
           ("tests/integration/test_stack_refusals.py", "-k", "leaf_member")),
    Mutant("a failed apply forgets known outputs", "hybridops_tf/record/transitions.py",
           "    merged = dict(running.outputs or {})\n", "    merged = {}\n",
           ("tests/unit/test_settle.py", "tests/integration/test_outputs_after_failure.py", "-k",
            "outputs and (local or fewer or known)")),
    Mutant("an empty state hides objects the record knows", "hybridops_tf/record/transitions.py",
           "    if missing:\n", "    if False:\n",
           ("tests/unit/test_settle_rules.py",)),
    Mutant("destroy is guarded like apply", "hybridops_tf/operation/steps.py",
           "    if req.command != Command.APPLY or previous is None:\n", "    if previous is None:\n",
           ("tests/unit/test_settle_rules.py",)),
    Mutant("ids are not matched before addresses", "hybridops_tf/record/transitions.py",
           "        and entry.id not in held and not is_data_source(addr, entry)\n",
           "        and not is_data_source(addr, entry)\n",
           ("tests/unit/test_record_objects.py",)),
    Mutant("a forgotten object is not released", "hybridops_tf/record/transitions.py",
           "        elif run is not None and run.planned_action in _FORGET_ACTIONS and _live(entry):\n",
           "        elif False:\n",
           ("tests/unit/test_record_objects.py",)),
    Mutant("the relay stops the engine each time it sees hyops gone", "hybridops_tf/engine/relay.py",
           "        if not self._gone_once.acquire(False):\n            return\n",
           "        if self.gone_at is not None:\n            return\n",
           ("tests/unit/test_relay.py", "-k", "gets_sigterm or ignores_sigterm or nested")),
    Mutant("a stale running member is drawn as one that runs", "hybridops_tf/picture/model.py",
           '    if status == "running" and record is not None and record.stale:\n', "    if False:\n",
           ("tests/unit/test_picture_statuses.py", "-k", "status_stack_status_json_gives")),
    Mutant("the HTML report shows text unescaped", "hybridops_tf/picture/html.py",
           "    return escape(str(value), quote=True)\n", "    return str(value)\n",
           ("tests/unit/test_picture.py", "-k", "escapes")),
    # Signals (docs/running.md: Signals): one rule from hyops's first line to its exit.
    Mutant("the console script loads hyops before the signal handling", "hybridops_tf/cli/console.py",
           "    INTERRUPTS.install()\n", "    pass\n",
           ("tests/unit/test_interrupts.py", "-k", "installs_the_handling")),
    Mutant("a signal before any command began is not acted on", "hybridops_tf/base/interrupts.py",
           "        if self._process and (self._rest or not (self._held or self._depth)):\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "exits_at_once")),
    Mutant("a signal blocked during start-up stays blocked", "hybridops_tf/base/interrupts.py",
           "        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)\n", "        pass\n",
           ("tests/unit/test_interrupts.py", "-k", "blocked_during_start_up")),
    Mutant("a settling read is sent the first signal", "hybridops_tf/base/interrupts.py",
           "        if self.settling and number == 1:\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "settling_read_is_not_sent")),
    Mutant("an engine is sent one signal twice", "hybridops_tf/base/interrupts.py",
           "        if self.sent.setdefault(number, mine) is not mine:\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "caught_up_exactly_once")),
    Mutant("an engine read starts after the signal", "hybridops_tf/engine/process.py",
           "        if not settling:\n", "        if False:\n",
           ("tests/unit/test_process.py", "-k", "ordinary_read_does_not_start")),
    Mutant("a wait for a busy lock outlives the signal", "hybridops_tf/store/local.py",
           '            INTERRUPTS.check(f"before the lock of {self.module_ref} was taken; nothing was changed")\n',
           "            pass\n",
           ("tests/integration/test_signal_matrix.py", "-k", "lock and SIGINT-SIGINT-ignored")),
    Mutant("an init cut short by the signal is a failure", "hybridops_tf/engine/runner.py",
           "        if captured.returncode != 0 and captured.interrupted is not None:  # cut short: not a failure\n",
           "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "init_cut_short")),
    Mutant("a version probe cut short by the signal is a failure", "hybridops_tf/engine/binary.py",
           "    if captured.returncode != 0 and captured.interrupted is not None:  # cut short: not a failure\n",
           "    if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "probe_cut_short")),
    Mutant("an apply stopped while planning is settled error", "hybridops_tf/operation/steps.py",
           "    if _stopped_before_any_change(req, reader, result, folder):\n", "    if False:\n",
           ("tests/integration/test_signal_matrix.py", "-k", "plans and SIGINT-SIGINT-default")),
    Mutant("the scheduler asks `done` before it looks for a signal", "hybridops_tf/stack/runner.py",
           "            while True:\n"
           "                if process.FORWARDER.received is not None and not self.interrupted:\n"
           "                    self.interrupted = True\n"
           "                    sched.interrupt()\n"
           "                if sched.done:  # asked after the interrupt: one that came between two members ends here\n"
           "                    break\n",
           "            while not sched.done:\n"
           "                if process.FORWARDER.received is not None and not self.interrupted:\n"
           "                    self.interrupted = True\n"
           "                    sched.interrupt()\n",
           ("tests/unit/test_interrupts.py", "-k", "between_two_members")),
    Mutant("a member stopped by the signal is reported error", "hybridops_tf/stack/runner.py",
           "    return MemberStatus.INTERRUPTED if code == ExitCode.INTERRUPTED else MemberStatus.ERROR\n",
           "    return MemberStatus.ERROR\n",
           ("tests/integration/test_stack_apply.py", "-k", "sigint")),
    Mutant("SIGTERM exits 130 like SIGINT", "hybridops_tf/cli/interrupted.py",
           "    return exit_code(INTERRUPTS.received)\n", "    return ExitCode.INTERRUPTED\n",
           ("tests/integration/test_signal_matrix.py", "-k", "lock and SIGTERM-SIGINT-default")),
)


def _scratch() -> Path:
    root = Path(tempfile.mkdtemp(prefix="hyops-mutants-"))
    copy = root / "repo"
    shutil.copytree(REPO, copy, ignore=IGNORED)
    return copy


def _run(mutant: Mutant, copy: Path) -> tuple[bool, float, str]:
    """(caught, seconds, last lines of the guards' output)."""
    target = copy / mutant.path
    original = target.read_text(encoding="utf-8")
    if original.count(mutant.old) != 1:
        raise SystemExit(f"mutants: {mutant.path} no longer holds the text of mutant {mutant.name!r} exactly "
                         "once: update scripts/mutants.py")
    target.write_text(original.replace(mutant.old, mutant.new), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutant.guards],
                             cwd=copy, env=env, capture_output=True, text=True, timeout=1800)
    finally:
        target.write_text(original, encoding="utf-8")
    tail = "\n".join((out.stdout + out.stderr).strip().splitlines()[-3:])
    if out.returncode == 5:
        raise SystemExit(f"mutants: the guards of {mutant.name!r} selected no test: {' '.join(mutant.guards)}")
    return out.returncode != 0, time.monotonic() - started, tail


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="run only mutants whose name contains this text")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if args.k in m.name]
    copy = _scratch()
    survivors = []
    try:
        print(f"{'mutant':<58} {'caught':<7} {'seconds':>8}")
        for mutant in chosen:
            caught, seconds, tail = _run(mutant, copy)
            print(f"{mutant.name:<58} {'yes' if caught else 'NO':<7} {seconds:>8.1f}", flush=True)
            if not caught:
                survivors.append(mutant)
                print(f"  survivor: {mutant.path}: its guards passed:\n    " + tail.replace("\n", "\n    "))
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    print(f"{len(chosen) - len(survivors)} caught, {len(survivors)} survived")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
