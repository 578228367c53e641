"""`make mutants`: break each guarded rule on purpose and check that its tests notice.

A test that cannot fail is a defect. Each mutant below is the smallest change that breaks one
rule of the contract (a flipped condition, a dropped write, a skipped fsync); the script
applies it to a scratch copy of the repository, runs only the tests named as its guards
against that copy, and expects them to FAIL. A mutant the guards let pass is a survivor: the
rule has no test that holds it, and the script exits 1 naming it. The summary says how many
were caught of how many, per area of the contract (AREAS), and each survivor by name.

    .venv/bin/python scripts/mutants.py                  # every mutant
    .venv/bin/python scripts/mutants.py -k fsync         # those whose name contains "fsync"
    .venv/bin/python scripts/mutants.py --area queue     # those of one area

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
IGNORED = shutil.ignore_patterns(".venv", ".engines", ".git", ".hyops", "__pycache__", ".pytest_cache", ".terraform",
                                 "*.tfstate*", ".terraform.lock.hcl")


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository
    old: str  # must occur exactly once
    new: str
    guards: tuple[str, ...]  # pytest arguments selecting the tests that must catch it
    area: str = ""  # the contract's area (AREAS), counted apart in the summary


WRITER_GUARD = ("tests/unit/test_another_writer_rules.py",)  # issue 44's rules, each where it alone decides
SIGNALS, LOOKUPS, QUEUE, STACK, STORE = "signals", "lookups", "queue", "stack truth", "store"
AREAS = (SIGNALS, LOOKUPS, QUEUE, STACK, STORE)

MUTANTS = (
    Mutant("destroy trusts exit 0 without an empty state", "hybridops_tf/operation/settle.py",
           "    if evidence.state.is_empty:\n", "    if True:\n",
           ("tests/integration/test_destroy_leftovers.py", "-k", "local")),
    Mutant("atomic write skips the directory fsync", "hybridops_tf/base/files.py",
           "        fsync_dir(self.path.parent)\n", "        pass\n",
           ("tests/unit/test_durable_write_order.py",)),
    Mutant("shared store writes without holding the lock", "hybridops_tf/store/postgres.py",
           '_IF_HELD = "(SELECT yes FROM held)"\n', '_IF_HELD = "true"\n',
           ("tests/integration/test_shared_store_lock_check.py",), STORE),
    Mutant("a second ref takes over another ref's state", "hybridops_tf/operation/places.py",
           "    if not others:\n        if marker is not None:\n",
           "    if True:\n        if marker is not None:\n",
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
           ("tests/integration/test_stack_refusals.py", "-k", "leaf_member"), STACK),
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
           ("tests/unit/test_relay.py", "-k", "gets_sigterm or ignores_sigterm or nested"), SIGNALS),
    Mutant("a stale running member is drawn as one that runs", "hybridops_tf/picture/model.py",
           "    if record is not None and record.stale:\n", "    if False:\n",
           ("tests/unit/test_picture_statuses.py", "-k", "status_stack_status_json_gives"), STACK),
    Mutant("a lookup candidate a state or record holds is adopted", "hybridops_tf/reconcile/lookup/judge.py",
           "        if candidate.id in held:\n", "        if False:\n",
           ("tests/unit/test_lookup_rules.py", "tests/unit/test_lookup_consult.py",
            "tests/integration/test_reconcile_lookups.py", "-k", "held or lies"), LOOKUPS),
    Mutant("a lookup candidate whose match attributes differ is kept", "hybridops_tf/reconcile/lookup/judge.py",
           "        elif differs:\n",
           "        elif False:\n",
           ("tests/unit/test_lookup_rules.py", "-k", "found or differs"), LOOKUPS),
    Mutant("one of several lookup candidates is adopted", "hybridops_tf/reconcile/lookup/judge.py",
           "    elif len(kept) == 1:\n", "    elif len(kept) >= 1:\n",
           ("tests/unit/test_lookup_rules.py", "tests/integration/test_reconcile_lookups.py", "-k",
            "several or two_candidates and terraform"), LOOKUPS),
    Mutant("an incomplete lookup that finds none drops the orphan", "hybridops_tf/reconcile/lookup/judge.py",
           "        outcome = Outcome.NONE if complete else Outcome.NOT_FOUND\n", "        outcome = Outcome.NONE\n",
           ("tests/unit/test_lookup_rules.py", "-k", "none_left"), LOOKUPS),
    Mutant("a candidate is adopted though a match attribute was never planned",
           "hybridops_tf/reconcile/lookup/judge.py", "    elif unplanned:\n", "    elif False:\n",
           ("tests/unit/test_lookup_rules.py", "-k", "never_lets"), LOOKUPS),
    Mutant("a second object beside the one in state is adopted", "hybridops_tf/reconcile/lookup/judge.py",
           "        return self.outcome is Outcome.FOUND and not self.in_state\n",
           "        return self.outcome is Outcome.FOUND\n",
           ("tests/unit/test_lookup_rules.py", "-k", "second_object"), LOOKUPS),
    Mutant("an object two orphans could each be is adopted", "hybridops_tf/reconcile/lookup/judge.py",
           "                        if others else ask)\n", "                        if False else ask)\n",
           ("tests/unit/test_lookup_rules.py", "-k", "nobodys"), LOOKUPS),
    Mutant("the unnamed orphan is dropped with a create no lookup answered", "hybridops_tf/reconcile/lookup/judge.py",
           "                and all(a.adoptable or a.outcome is Outcome.NONE for a in self.asks))\n",
           "                and any(a.adoptable or a.outcome is Outcome.NONE for a in self.asks))\n",
           ("tests/unit/test_lookup_rules.py", "-k", "settled_only"), LOOKUPS),
    Mutant("the unnamed orphan is dropped though some creates were not asked about",
           "hybridops_tf/reconcile/lookup/judge.py",
           "        return (bool(self.asks) and not self.not_asked\n", "        return (bool(self.asks)\n",
           ("tests/unit/test_lookup_rules.py", "tests/unit/test_lookup_consult.py", "-k",
            "settled_only or no_lookup_covers"), LOOKUPS),
    Mutant("a hung lookup is waited for", "hybridops_tf/engine/process.py",
           "                out, err = proc.communicate(timeout=timeout)\n",
           "                out, err = proc.communicate(timeout=None if timeout else None)\n",
           ("tests/unit/test_lookups_file.py", "-k", "hung"), LOOKUPS),
    Mutant("the HTML report shows text unescaped", "hybridops_tf/picture/html.py",
           "    return escape(str(value), quote=True)\n", "    return str(value)\n",
           ("tests/unit/test_picture.py", "-k", "escapes")),
    Mutant("an ephemeral value is written like any other", "hybridops_tf/base/redact.py",
           "    if name in ephemeral_names:\n        return EPHEMERAL\n", "    if False:\n        return EPHEMERAL\n",
           ("tests/unit/test_inputs.py", "-k", "ephemeral")),
    Mutant("an import replaces the failure it follows", "hybridops_tf/operation/settle.py",
           "        settled = transitions.after_import(settled, before)\n", "        pass\n",
           ("tests/integration/test_reconcile.py", "-k", "keeps_the_failure")),
    Mutant("a deposed object's delete takes over the new object's progress", "hybridops_tf/engine/progress.py",
           "            if deposed and cur is not None:\n                new = cur\n",
           "            if False:\n                new = cur\n",
           ("tests/unit/test_events.py", "-k", "create_before_destroy")),
    Mutant("a deposed object's delete rewrites the current entry", "hybridops_tf/record/transitions.py",
           "        if _deposed_delete(prev, p, state.get(addr) if state is not None else None):\n",
           "        if False:\n",
           ("tests/unit/test_record_objects.py", "-k", "deposed_object")),
    Mutant("a run the engine refused moves the record's updated_at", "hybridops_tf/operation/steps.py",
           "            store.write(restored, stamp=False)", "            store.write(restored)",
           ("tests/integration/test_engine_refusals.py", "-k", "names_the_run")),
    Mutant("a state mv by hand is consistent while the record names the old address",
           "hybridops_tf/reconcile/compare.py",
           "        if moved:\n            found.append(_moved(ev, moved, cmd))\n",
           "        if False:\n            found.append(_moved(ev, moved, cmd))\n",
           ("tests/unit/test_reconcile_compare.py", "-k", "moved_in_state")),
    Mutant("--forget-released forgets what the record never released", "hybridops_tf/reconcile/released.py",
           "        if not gone:\n", "        if False:\n",
           ("tests/integration/test_refactors.py", "-k", "forget_released")),
    Mutant("a run from the wrong folder makes a second root for a claimed state", "hybridops_tf/operation/places.py",
           "    if not claiming:\n", "    if True:\n",
           ("tests/integration/test_runtime_root.py", "-k", "other_root")),
    Mutant("a stack member's clashing default ref runs and fails", "hybridops_tf/operation/places.py",
           "        if others and not mine:\n", "        if False:\n",
           ("tests/integration/test_stack_refusals.py", "-k", "clashes")),
    Mutant("plan ignores the recorded inputs destroy reuses", "hybridops_tf/cli/module_cmds.py",
           "            recorded_inputs=True,  # as destroy: the last run's inputs under those given\n", "",
           ("tests/integration/test_inputs_precedence.py", "-k", "plan_without_inputs")),
    Mutant("a constant expression in a var file is refused", "hybridops_tf/inputs/values.py",
           "        value = _constants(value)\n", "",
           ("tests/unit/test_inputs.py", "-k", "constant_expression")),
    Mutant("reconcile's commands for a workspace act on the default one", "hybridops_tf/record/advice.py",
           "                 *((\"--workspace\", shlex.quote(where.workspace)) if where.workspace else ()), *extra]",
           "                 *extra]",
           ("tests/unit/test_reconcile_compare.py", "-k", "workspace_is_named")),
    Mutant("the stack table cuts an error mid-word", "hybridops_tf/cli/stack_show.py",
           '            error = render.clip(str(m["error"]), 100)\n', '            error = str(m["error"])[:100]\n',
           ("tests/unit/test_stack_table.py",)),
    Mutant("--resume skips a member whose configuration changed", "hybridops_tf/record/applied.py",
           "    elif rec.config_digest != now.config_digest:\n", "    elif False:\n",
           ("tests/unit/test_config_digest.py", "tests/integration/test_stack_resume_changes.py", "-k",
            "reason_to_run or root_configuration")),
    Mutant("the configuration digest leaves out local child modules", "hybridops_tf/operation/config_digest.py",
           "    files = [path for directory in module_tree(root) for path in config_files(directory)]\n",
           "    files = list(config_files(root))\n",
           ("tests/unit/test_config_digest.py", "-k", "tree_the_lock_file")),
    Mutant("reconcile --stack calls a member whose configuration changed consistent",
           "hybridops_tf/reconcile/compare.py", "    if why:\n        return [_finding(ev, Code.CONFIG_CHANGED",
           "    if False:\n        return [_finding(ev, Code.CONFIG_CHANGED",
           ("tests/unit/test_reconcile_members.py", "tests/integration/test_reconcile_stack_members.py", "-k",
            "configuration_changed"), STACK),
    Mutant("a failed stack member is advised its stale rerun inputs", "hybridops_tf/record/advice.py",
           "            return self._module(\"apply\", where, *map(shlex.quote, where.stack_args))\n",
           "            return self._module(\"apply\", where, *map(shlex.quote, where.inputs_args))\n",
           ("tests/unit/test_reconcile_commands.py", "tests/integration/test_reconcile_stack_members.py", "-k",
            "stack_files_inputs_now or stack_file_as_it_is_now")),
    Mutant("a run whose runner died is shown as still running", "hybridops_tf/stack/view.py",
           "    if runner_alive is True:\n        return RUNNING\n", "    if True:\n        return RUNNING\n",
           ("tests/unit/test_stack_view.py", "tests/integration/test_stack_views_after_kill.py", "-k",
            "interrupted or sigkilled"), STACK),
    Mutant("the stack report never says a member started", "hybridops_tf/stack/member.py",
           "            self.on_run(member.name, run_id)\n", "            pass\n",
           ("tests/integration/test_stack_views_after_kill.py", "-k", "sigkilled"), STACK),
    Mutant("the fold rescans a judged block per diagnostic", "hybridops_tf/engine/progress.py",
           "            if block is None or block in self._judged:\n", "            if block is None:\n",
           ("tests/unit/test_fold_growth.py", "-k", "postcondition")),
    # Signals (docs/running.md: Signals): one rule from hyops's first line to its exit.
    Mutant("the console script loads hyops before the signal handling", "hybridops_tf/cli/console.py",
           "    INTERRUPTS.install()\n", "    pass\n",
           ("tests/unit/test_interrupts.py", "-k", "installs_the_handling"), SIGNALS),
    Mutant("a signal before any command began is not acted on", "hybridops_tf/base/interrupts.py",
           "        if self._process and (self._rest or not (self._held or self._depth)):\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "exits_at_once"), SIGNALS),
    Mutant("a signal blocked during start-up stays blocked", "hybridops_tf/base/interrupts.py",
           "        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)\n", "        pass\n",
           ("tests/unit/test_interrupts.py", "-k", "blocked_during_start_up"), SIGNALS),
    Mutant("a settling read is sent the first signal", "hybridops_tf/base/interrupts.py",
           "        if self.settling and number == 1:\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "settling_read_is_not_sent"), SIGNALS),
    Mutant("an engine is sent one signal twice", "hybridops_tf/base/interrupts.py",
           "        if self.sent.setdefault(number, mine) is not mine:\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "caught_up_exactly_once"), SIGNALS),
    Mutant("an engine read starts after the signal", "hybridops_tf/engine/process.py",
           "        if not settling:\n", "        if False:\n",
           ("tests/unit/test_process.py", "-k", "ordinary_read_does_not_start"), SIGNALS),
    Mutant("a wait for a busy lock outlives the signal", "hybridops_tf/store/local.py",
           '            INTERRUPTS.check(f"before the lock of {self.module_ref} was taken; nothing was changed")\n',
           "            pass\n",
           ("tests/integration/test_signal_matrix.py", "-k", "lock and SIGINT-SIGINT-ignored"), SIGNALS),
    Mutant("an init cut short by the signal is a failure", "hybridops_tf/engine/runner.py",
           "        if captured.returncode != 0 and captured.interrupted is not None:  # cut short: not a failure\n",
           "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "init_cut_short"), SIGNALS),
    Mutant("a version probe cut short by the signal is a failure", "hybridops_tf/engine/binary.py",
           "    if captured.returncode != 0 and captured.interrupted is not None:  # cut short: not a failure\n",
           "    if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "probe_cut_short"), SIGNALS),
    Mutant("an apply stopped while planning is settled error", "hybridops_tf/operation/steps.py",
           "    if _stopped_before_any_change(req, reader, result, folder):\n", "    if False:\n",
           ("tests/integration/test_signal_matrix.py", "-k", "plans and SIGINT-SIGINT-default"), SIGNALS),
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
           ("tests/unit/test_interrupts.py", "-k", "between_two_members"), SIGNALS),
    Mutant("a member stopped by the signal is reported error", "hybridops_tf/stack/member.py",
           "    return MemberStatus.INTERRUPTED if code == ExitCode.INTERRUPTED else MemberStatus.ERROR\n",
           "    return MemberStatus.ERROR\n",
           ("tests/integration/test_stack_apply.py", "-k", "sigint"), SIGNALS),
    Mutant("SIGTERM exits 130 like SIGINT", "hybridops_tf/cli/interrupted.py",
           "    return exit_code(INTERRUPTS.received)\n", "    return ExitCode.INTERRUPTED\n",
           ("tests/integration/test_signal_matrix.py", "-k", "lock and SIGTERM-SIGINT-default"), SIGNALS),
    Mutant("a queued member is claimed again though it is no longer queued", "hybridops_tf/stack/queue/tables.py",
           '"WHERE run_id = %s AND name = %s AND status = %s RETURNING name",',
           '"WHERE run_id = %s AND name = %s AND (status = %s OR true) RETURNING name",',
           ("tests/integration/test_stack_queue.py", "-k", "second_job"), QUEUE),
    Mutant("a queued run's dependants start whatever their upstreams' ends", "hybridops_tf/stack/queue/dispatch.py",
           "        sched.finish(name, status)\n", "        sched.finish(name, MemberStatus.OK)\n",
           ("tests/unit/test_queue_dispatch.py",), QUEUE),
    Mutant("a lost worker's member is queued again", "hybridops_tf/stack/queue/lost.py",
           "    if member.status == QUEUED:  # taken from the queue, never claimed: nothing ran\n",
           "    if member.status in (QUEUED, RUNNING):\n        member.set(status=QUEUED)\n"
           "        tables.save(conn, run.run_id, rows)\n",
           ("tests/integration/test_stack_queue.py", "-k", "killed"), QUEUE),
    Mutant("a worker's late end, after the run gave its member up, counts as served",
           "hybridops_tf/stack/queue/work.py",
           "    elif result.given_up or any(", "    elif any(",
           ("tests/integration/test_stack_queue.py", "-k", "silent"), QUEUE),
    Mutant("a cancelled run leaves its queued members for a worker", "hybridops_tf/stack/queue/cancel.py",
           "        if row.status not in (WAITING, QUEUED):\n", "        if row.status != WAITING:\n",
           ("tests/integration/test_stack_queue.py", "-k", "cancelled_run"), QUEUE),
    Mutant("a cancelled run never finishes after its running member ends", "hybridops_tf/stack/queue/progress.py",
           "    if progress.done or all(r.ended for r in rows):", "    if progress.done:",
           ("tests/integration/test_stack_queue.py", "-k", "cancelled_run"), QUEUE),
    Mutant("a stack's second queued run is queued beside its unfinished one", "hybridops_tf/stack/queue/submit.py",
           "                if not supersede:\n", "                if False:\n",
           ("tests/integration/test_stack_queue.py", "-k", "supersede"), QUEUE),
    Mutant("a worker fails for members its checkout handed back", "hybridops_tf/stack/queue/work.py",
           "            if end.handed_back:\n                result.handed_back.append(end)\n",
           "            if False:\n                result.handed_back.append(end)\n",
           ("tests/integration/test_stack_queue.py", "-k", "handed_back"), QUEUE),
    Mutant("a frozen worker still holding its module lock is called lost", "hybridops_tf/stack/queue/lost.py",
           "    frozen = pgconn.lock_held(conn, member.key)\n", "    frozen = False\n",
           ("tests/integration/test_stack_queue.py", "-k", "silent"), QUEUE),
    Mutant("a member whose outcome is uncertain passes its JUnit case", "hybridops_tf/stack/junit.py",
           "    if uncertain:  # what exists is not known whatever the status says (stack/view.py)\n",
           "    if False:\n",
           ("tests/unit/test_junit_status.py", "-k", "uncertain"), STACK),
    Mutant("--queue --junit without --wait queues the run", "hybridops_tf/cli/stack_cmds.py",
           '    if ctx.meta.get("queue") and ctx.meta.get("junit") and not ctx.meta.get("wait"):\n',
           "    if False:\n",
           ("tests/unit/test_junit_status.py", "-k", "queue_with_junit_but_no_wait"), QUEUE),
    Mutant("a journal line of another run is folded into the report", "hybridops_tf/runtime/live_journal.py",
           '        if not isinstance(update, dict) or update.get("run") != doc.get("run_id") or '
           'update.get("name") not in index:\n',
           '        if not isinstance(update, dict) or update.get("name") not in index:\n',
           ("tests/unit/test_live_journal.py", "-k", "another_runs"), STORE),
    Mutant("a worker lends a kept connection the server closed", "hybridops_tf/stack/queue/jobs.py",
           "            check=ConnectionPool.check_connection,\n", "            check=None,\n",
           ("tests/integration/test_stack_queue.py", "-k", "idle_connections"), QUEUE),
    Mutant("a worker's next member uses the store connection the server closed", "hybridops_tf/stack/queue/take.py",
           "            store.check_idle_connection()\n", "            pass\n",
           ("tests/integration/test_stack_queue.py", "-k", "idle_between_runs"), QUEUE),
    Mutant("a shared-store reader ignores a run's journaled updates", "hybridops_tf/stack/report.py",
           "    return live_journal.fold_lines(doc, store.document_lines(STACK_REPORT, stack_name, doc[\"run_id\"]))\n",
           "    return doc\n",
           ("tests/integration/test_shared_store.py", "-k", "journals_member_updates"), STORE),
    Mutant("a reader takes an unfinished queued run's report as queued", "hybridops_tf/stack/report.py",
           "        return _queued_now(store, doc)\n", "        return doc\n",
           ("tests/integration/test_stack_queue.py", "-k", "unfinished_queued"), STACK),
    Mutant("a worker keeps only the parses of the members it ran", "hybridops_tf/stack/queue/take.py",
           "            remember(member.directory, self.runtime.hcl_cache())\n", "            pass\n",
           ("tests/unit/test_queue_take.py",), QUEUE),
    # Issue 46: each rule below is held by a test whose fixture lets it alone decide (the lie's id
    # in one place only, a lookup that exits 1 after a valid answer, a run interrupted with no
    # uncertain member, a stack file edited between queue and work, ...).
    Mutant("a lookup candidate only the module's state holds is adopted", "hybridops_tf/reconcile/lookup/consult.py",
           "            held.setdefault(ident, f\"the state of {ev.where.module_ref} (as {res.address})\")\n",
           "            pass\n",
           ("tests/unit/test_lookup_consult.py", "-k", "only_the_modules_own_state"), LOOKUPS),
    Mutant("a lookup candidate a record released is adopted", "hybridops_tf/reconcile/lookup/consult.py",
           "    return ids | {o.id: f\"{o.address}, released\" for o in record.released if o.id}\n", "    return ids\n",
           ("tests/unit/test_lookup_consult.py", "-k", "released_list"), LOOKUPS),
    Mutant("a lookup candidate another module's record holds is adopted", "hybridops_tf/reconcile/lookup/consult.py",
           "                held.setdefault(ident, f\"the record of {key} (as {address})\")\n",
           "                pass\n",
           ("tests/unit/test_lookup_consult.py", "-k", "another_modules_record"), LOOKUPS),
    Mutant("a lookup that exits non-zero after a valid answer is believed", "hybridops_tf/reconcile/lookup/ask.py",
           "    if captured.returncode != 0:\n", "    if False:\n",
           ("tests/unit/test_lookup_consult.py", "-k", "exits_non_zero"), LOOKUPS),
    Mutant("lookups are asked while the dead run's engine still runs", "hybridops_tf/reconcile/lookup/consult.py",
           "not ev.busy and not ev.engine_alive", "not ev.busy",
           ("tests/unit/test_lookup_consult.py", "-k", "engine_still_runs"), LOOKUPS),
    Mutant("lookups are asked though the state could not be read", "hybridops_tf/reconcile/lookup/consult.py",
           "    return (ev.record is not None and ev.state is not None and not ev.busy",
           "    return (ev.record is not None and not ev.busy",
           ("tests/unit/test_lookup_consult.py", "-k", "state_could_not_be_read"), LOOKUPS),
    Mutant("a lookup is sent a sensitive planned value", "hybridops_tf/reconcile/lookup/consult.py",
           "asks.append(_Ask(orphan, address, spec, safe_planned(planned[address]), False))",
           "asks.append(_Ask(orphan, address, spec, planned[address], False))",
           ("tests/unit/test_lookup_consult.py", "-k", "without_a_sensitive_value"), LOOKUPS),
    Mutant("--write adopts an id a record took since the lookup answered", "hybridops_tf/reconcile/lookup/adopt.py",
           "                if candidate.id in held_ids(store, ev):\n", "                if False:\n",
           ("tests/unit/test_lookup_consult.py", "-k", "took_since"), LOOKUPS),
    Mutant("--write adopts for an orphan the record no longer lists", "hybridops_tf/reconcile/lookup/adopt.py",
           "        if orphan not in listed:\n", "        if False:\n",
           ("tests/unit/test_lookup_consult.py", "-k", "only_on_orphans"), LOOKUPS),
    Mutant("a member whose record changed is retried", "hybridops_tf/stack/queue/take.py",
           "            result.retryable = False  # its record changed: something ran, never again by itself\n",
           "            pass\n",
           ("tests/unit/test_queue_take.py", "-k", "nothing_could_have_changed"), QUEUE),
    Mutant("a member that may pass is retried for ever", "hybridops_tf/stack/queue/take.py",
           "            retry = result.retryable and attempts < jobs.RETRIES\n",
           "            retry = result.retryable\n",
           ("tests/unit/test_queue_take.py", "-k", "at_most_retries"), QUEUE),
    Mutant("a worker runs a member from a stack file edited since it was queued", "hybridops_tf/stack/queue/take.py",
           "            if stack_digest(path) != run.stack_digest:\n", "            if False:\n",
           ("tests/unit/test_queue_take.py", "-k", "edited_between_queue_and_work"), QUEUE),
    Mutant("a stopped run's jobs no worker took stay queued", "hybridops_tf/stack/queue/progress.py",
           "        if not progress.stopped or not given_up:\n", "        if True:\n",
           ("tests/unit/test_queue_dispatch.py", "-k", "withdrawn"), QUEUE),
    Mutant("a stopped run withdraws members a worker already runs", "hybridops_tf/stack/queue/progress.py",
           "if by_name[n].status == QUEUED),", "if by_name[n].status in (QUEUED, RUNNING)),",
           ("tests/unit/test_queue_dispatch.py", "-k", "withdrawn"), QUEUE),
    Mutant("a member whose dead run's engine still runs is certain in the stack views", "hybridops_tf/stack/view.py",
           "    if now.engine_alive:\n", "    if False:\n",
           ("tests/unit/test_stack_view.py", "-k", "engine_still_runs"), STACK),
    Mutant("the stack views never hear that a dead run's engine still runs", "hybridops_tf/stack/report.py",
           "engine_alive=e.engine_alive is not None,", "engine_alive=False,",
           ("tests/unit/test_stack_view.py", "-k", "engine_alive_record"), STACK),
    Mutant("an interrupted run whose members all settled exits 0", "hybridops_tf/stack/view.py",
           '    return document.get("state") == INTERRUPTED or any(', "    return any(",
           ("tests/unit/test_stack_view.py", "-k", "all_settled"), STACK),
    Mutant("a stale running member is certain in the stack views", "hybridops_tf/stack/view.py",
           "    if now.stale:\n", "    if False:\n",
           ("tests/unit/test_stack_view.py", "-k", "stale_record_or_orphans"), STACK),
    Mutant("a member listing suspect orphans is certain in the stack views", "hybridops_tf/stack/view.py",
           "    if now.orphans:\n", "    if False:\n",
           ("tests/unit/test_stack_view.py", "-k", "stale_record_or_orphans"), STACK),
    Mutant("a member whose record never reached its run shows running", "hybridops_tf/stack/view.py",
           "    if state == INTERRUPTED:  # its record never reached run R's `running`: its engine never started\n",
           "    if False:\n",
           ("tests/unit/test_stack_view.py", "-k", "never_reached"), STACK),
    Mutant("the HTML story is green for a run whose runner died", "hybridops_tf/picture/html.py",
           '                  or pic.state == "interrupted" else "green")', '                  else "green")',
           ("tests/unit/test_picture.py", "-k", "story_is_red"), STACK),
    Mutant("reconcile --stack ignores a member's inputs changed in the stack file",
           "hybridops_tf/reconcile/members.py",
           'inputs_digest=(record.inputs_digest or "") if member.unwired else resolved.digest(key),',
           'inputs_digest=record.inputs_digest or "",',
           ("tests/integration/test_reconcile_stack_members.py", "-k", "inputs_in_the_stack_file"), STACK),
    Mutant("an engine spawned just as the signal came is not told to stop", "hybridops_tf/base/interrupts.py",
           "        if catch_up and count and last is not None:\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "catch_up_alone or just_as"), SIGNALS),
    Mutant("an engine run spawned just as the signal came is not told to stop", "hybridops_tf/engine/process.py",
           "        key = FORWARDER.register(lambda signum: _send(proc, signum), catch_up=True)\n",
           "        key = FORWARDER.register(lambda signum: _send(proc, signum), catch_up=False)\n",
           ("tests/unit/test_interrupts.py", "-k", "just_as and run_streaming"), SIGNALS),
    Mutant("an engine read spawned just as the signal came is not told to stop", "hybridops_tf/engine/process.py",
           "settling=settling, catch_up=True)\n", "settling=settling, catch_up=False)\n",
           ("tests/unit/test_interrupts.py", "-k", "just_as and run_capture"), SIGNALS),
    Mutant("a stack run's start keeps the lines a killed run left in the store", "hybridops_tf/stack/report.py",
           "                self._update(lambda: self.runtime.store.drop_document_lines(STACK_REPORT, "
           "self.report.stack))\n", "                pass\n",
           ("tests/integration/test_shared_store.py", "-k", "start_drops"), STORE),
    Mutant("a lookup's answer is not kept in its run folder", "hybridops_tf/reconcile/lookup/ask.py",
           '        folder.write_text(f"{stem}.stdout", captured.stdout)\n', "        pass\n",
           ("tests/unit/test_lookup_consult.py", "-k", "every_planned_create"), LOOKUPS),
    Mutant("a lookup answer of more than 1000 candidates is read", "hybridops_tf/reconcile/lookup/protocol.py",
           "    if len(found) > MAX_CANDIDATES:\n", "    if False:\n",
           ("tests/unit/test_lookup_rules.py", "-k", "not_the_answer_document"), LOOKUPS),
    Mutant("a lookup candidate with a blank id is read", "hybridops_tf/reconcile/lookup/protocol.py",
           "        if not isinstance(ident, str) or not ident.strip():\n", "        if not isinstance(ident, str):\n",
           ("tests/unit/test_lookup_rules.py", "-k", "not_the_answer_document"), LOOKUPS),
    Mutant("an engine run asked for after the signal starts", "hybridops_tf/engine/process.py",
           "        if FORWARDER.received is not None:\n", "        if False:\n",
           ("tests/unit/test_interrupts.py", "-k", "asked_for_after_the_signal"), SIGNALS),
    Mutant("a member handed out as the signal came starts", "hybridops_tf/stack/member.py",
           "        if process.FORWARDER.received is not None:  # it came as this member was handed out",
           "        if False:  #",
           ("tests/unit/test_interrupts.py", "-k", "handed_out"), SIGNALS),
    Mutant("a far runner's member holding its lock is called interrupted", "hybridops_tf/stack/view.py",
           "        if any(records[n].held for n in running if n in records):\n", "        if False:\n",
           ("tests/unit/test_stack_view.py", "-k", "another_host"), STACK),
    Mutant("a member that settled before its runner died shows running", "hybridops_tf/stack/view.py",
           "        if settled is not None:  # it finished; the runner died before it could say so\n",
           "        if False:\n",
           ("tests/unit/test_stack_view.py", "-k", "settled_before"), STACK),
    Mutant("an unfinished queued run is called interrupted", "hybridops_tf/stack/view.py",
           '    if doc.get("queue") is True:  # kept by the store, not a process', "    if False:  #",
           ("tests/unit/test_stack_view.py", "-k", "unfinished_queued"), STACK),
    Mutant("a local stack run's start keeps a killed run's journal lines", "hybridops_tf/runtime/live_journal.py",
           'self._file = self.path.open("w", encoding="utf-8")', 'self._file = self.path.open("a", encoding="utf-8")',
           ("tests/unit/test_live_journal.py", "-k", "empties_the_journal_file"), STORE),
    Mutant("a local run's journal goes though its finished report was not written", "hybridops_tf/stack/report.py",
           "self._journal.close(remove=written)", "self._journal.close(remove=True)",
           ("tests/unit/test_live_journal.py", "-k", "drops_the_journal"), STORE),
    Mutant("a shared-store run's lines go though its finished report was not written", "hybridops_tf/stack/report.py",
           "                elif written:\n", "                else:\n",
           ("tests/integration/test_shared_store.py", "-k", "finish_keeps"), STORE),
    Mutant("a half-written journal line breaks the report's reader", "hybridops_tf/runtime/live_journal.py",
           "        except ValueError:\n            continue  # a line a killed runner left half written\n",
           "        except TypeError:\n            continue\n",
           ("tests/unit/test_live_journal.py", "-k", "half_written"), STORE),
    Mutant("store import-local leaves out a killed stack run's journal", "hybridops_tf/runtime/transfer.py",
           "                    text = json.dumps(live_journal.fold(doc, report), indent=2)",
           "                    text = text  # not folded:",
           ("tests/integration/test_shared_store.py", "-k", "import_local_brings"), STORE),
    # issue 43: inputs are the engine's values, end to end
    Mutant("a recorded list input is asked whether it is a placeholder by hashing", "hybridops_tf/base/redact.py",
           "    return isinstance(value, str) and value in PLACEHOLDERS\n", "    return value in PLACEHOLDERS\n",
           ("tests/integration/test_inputs_as_values.py", "-k", "list_map_and_object and bundled")),
    Mutant("a .tfvars $${ escape reaches the engine escaped", "hybridops_tf/inputs/hcl_values.py",
           '        return "${" if text[i] == self.dollar', '        return "$${" if text[i] == self.dollar',
           ("tests/unit/test_hcl_values.py",)),
    Mutant("an init that needs -upgrade names no hyops command for it", "hybridops_tf/engine/runner.py",
           '"change)") if upgrade and asks_upgrade(captured.stderr + captured.stdout) else ""',
           '"change)") if False else ""',
           ("tests/integration/test_null_provider.py", "-k", "upgrade")),
    Mutant("a partial apply says --write records absent where the same --write adopts the orphan",
           "hybridops_tf/reconcile/compare.py",
           "        if any(lookup.adoptable for lookup in (ev.lookups or {}).values()):\n",
           "        if False:\n",
           ("tests/integration/test_reconcile_lookups.py", "-k", "one_free and terraform"), LOOKUPS),
    Mutant("a heredoc loses its last newline", "hybridops_tf/inputs/hcl_values.py",
           '    text = "".join(f"{line}\\n" for line in body)\n', '    text = "\\n".join(body)\n',
           ("tests/unit/test_hcl_values.py",)),
    Mutant("--var count=~ becomes null", "hybridops_tf/inputs/values.py",
           "                engine_syntax or value is None or (", "                engine_syntax or (",
           ("tests/unit/test_inputs.py", "-k", "as_written")),
    Mutant("an apply whose init fails exits 1 with no attempt kept", "hybridops_tf/operation/steps.py",
           "        except EngineInitFailed as err:  # `init` changes no state: the engine refused the run\n",
           "        except ZeroDivisionError as err:\n",
           ("tests/integration/test_inputs_as_values.py", "-k", "init_fails and bundled")),
    Mutant("a set input keeps the order it was written in", "hybridops_tf/inputs/types.py",
           "            items = [unique[key] for key in sorted(unique)]\n",
           "            items = list(unique.values())\n",
           ("tests/unit/test_input_types.py",)),
    Mutant("a bug in hyops prints its traceback", "hybridops_tf/cli/main.py",
           "(base/bugs.py)\n        _bug(err)\n",
           "(base/bugs.py)\n        raise\n",
           ("tests/unit/test_bug_line.py",)),
    Mutant("a failed apply's next command reconciles the default workspace", "hybridops_tf/cli/render.py",
           "    reconcile = Commands(hyops=hyops).reconcile(where_of(ref, module_dir, workspace))\n",
           "    reconcile = Commands(hyops=hyops).reconcile(where_of(ref, module_dir, None))\n",
           ("tests/integration/test_advice_in_workspaces.py", "-k", "next_command")),
    Mutant("a record's advice names the default workspace", "hybridops_tf/record/advice.py",
           '                 workspace if workspace and workspace != "default" else None)\n',
           "                 None)\n",
           ("tests/integration/test_advice_in_workspaces.py", "-k", "import_advice")),
    Mutant("an instance key with non-ASCII letters is escaped unlike the engine", "hybridops_tf/engine/state.py",
           "json.dumps(index, ensure_ascii=False)", "json.dumps(index)",
           ("tests/unit/test_record_objects.py", "-k", "non_ascii")),
    Mutant("a destroyed record keeps a data source's entry", "hybridops_tf/record/transitions.py",
           "    rec.resources = {a: e for a, e in resources.items() if not is_data_source(a, e)}\n",
           "    rec.resources = resources\n",
           ("tests/unit/test_settle_rules.py", "-k", "data_source_entry")),
    Mutant("a lookup's held match is taken as nothing made", "hybridops_tf/reconcile/lookup/judge.py",
           "    if not kept and contradicted:\n", "    if False:\n",
           ("tests/unit/test_lookup_rules.py", "-k", "contradicts"), LOOKUPS),
    Mutant("a read-only stack command refuses a stack whose secret the workers give", "hybridops_tf/stack/loader.py",
           "        if missing and self.read_only:", "        if False:",
           ("tests/integration/test_stack_read_only_inputs.py", "-k", "without_the_workers_secret"), STACK),
    Mutant("reconcile takes the recorded placeholder over the caller's TF_VAR_", "hybridops_tf/reconcile/evidence.py",
           "        return {k: v for k, v in recorded.items() if not is_placeholder(v)}, ",
           "        return recorded, ",
           ("tests/integration/test_stack_read_only_inputs.py", "-k", "tf_var")),
    # issue 44: another writer
    Mutant("a moved state serial is no other writer", "hybridops_tf/record/stamp.py",
           "return self.lineage == other.lineage and self.serial == other.serial",
           "return self.lineage == other.lineage",
           WRITER_GUARD),
    Mutant("a state another writer changed is not judged", "hybridops_tf/reconcile/outside.py",
           "    return written(rec.state_seen, now)", "    return None",
           WRITER_GUARD),
    Mutant("state_missing is decided by address, not id", "hybridops_tf/reconcile/rules.py",
           "if ((addr in in_state and not (entry.id and held)) or", "if ((addr in in_state) or",
           WRITER_GUARD),
    Mutant("two objects for one address go unseen", "hybridops_tf/reconcile/compare.py",
           "view[a].id not in (None, i)}", "view[a].id not in (None, i) and False}",
           WRITER_GUARD),
    Mutant("a move the next apply undoes is called harmless", "hybridops_tf/reconcile/rules.py",
           "        if moves_undone(ev):", "        if False:",
           WRITER_GUARD),
    Mutant("an object another writer added is not marked outside", "hybridops_tf/record/transitions.py",
           'ResourceEntry(ResourceStatus.COMPLETE, "outside", obj.id, outside=True)',
           'ResourceEntry(ResourceStatus.COMPLETE, "outside", obj.id, outside=None)',
           WRITER_GUARD),
    Mutant("--resume skips a member another writer changed", "hybridops_tf/stack/member.py",
           "            why = (written,) if written else why", "            why = why",
           ("tests/integration/test_another_writer.py", "-k", "resume_never_skips"), STACK),
    Mutant("--resume's reason never names a missing lock file", "hybridops_tf/record/applied.py",
           "    elif rec.config_digest != now.config_digest and now.lock_file_missing:\n",
           "    elif False:\n",
           ("tests/unit/test_config_digest.py", "-k", "lock_file"), STACK),
    # issue 47, item 3: identity in the record (tests/unit/test_identity.py builds each rule's case)
    Mutant("the state's identity is not read", "hybridops_tf/engine/state.py",
           "    if not isinstance(identity, Mapping) or not identity:\n", "    if True:\n",
           ("tests/unit/test_identity.py", "-k", "show_json_identity or state_file_gives")),
    Mutant("an entry takes no identity from the state", "hybridops_tf/record/transitions.py",
           "    if obj.identity is not None:\n        return {\"identity\"",
           "    if False:\n        return {\"identity\"",
           ("tests/unit/test_identity.py", "-k", "state_view_carries")),
    Mutant("an entry keeps another object's identity", "hybridops_tf/record/transitions.py",
           "    if prev is None or prev.identity is None or ident is None or prev.id != ident:\n",
           "    if prev is None or prev.identity is None:\n",
           ("tests/unit/test_identity.py", "-k", "keeps_what_the_entry_knew")),
    Mutant("a failed show -json is no state_unreadable finding", "hybridops_tf/reconcile/compare.py",
           "    if ev.state_unreadable is not None and state is None:\n", "    if False:\n",
           ("tests/unit/test_identity.py", "-k", "state_unreadable")),
    Mutant("a show -json the engine refused is no state_unreadable evidence", "hybridops_tf/reconcile/evidence.py",
           '        unreadable = str(getattr(err, "message", err))\n', "        unreadable = None\n",
           ("tests/integration/test_identity.py", "-k", "cannot_show")),
    Mutant("import advice offers identity to an engine before 1.12", "hybridops_tf/engine/features.py",
           "    return parsed is not None and parsed >= IMPORT_IDENTITY_SINCE\n", "    return True\n",
           ("tests/unit/test_identity.py", "-k", "import_advice or identity_gate")),
    Mutant("an import block interpolates a value", "hybridops_tf/record/advice.py",
           '.replace("${", "$${").replace("%{", "%%{")', "",
           ("tests/unit/test_identity.py", "-k", "never_interpolates")),
    Mutant("the sim gives no object an identity", "hybridops_tf/sim/schema.py",
           '    if not state or not isinstance(state.get("id"), str):\n', "    if True:\n",
           ("tests/unit/test_sim_stop.py", "-k", "identity")),
    Mutant("the sim imports by id only, never by identity", "hybridops_tf/sim/servicer.py",
           '    if not object_id and request.HasField("identity"):\n', "    if False:\n",
           ("tests/unit/test_sim_stop.py", "-k", "identity")),
    Mutant("an empty STACK_FILE is read as the current directory", "hybridops_tf/cli/options.py",
           "        if isinstance(value, str) and not value.strip():\n", "        if False:\n",
           ("tests/unit/test_empty_arguments.py",)),
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
    parser.add_argument("--area", choices=AREAS, help="run only the mutants of this area of the contract")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if args.k in m.name and args.area in (None, m.area)]
    copy = _scratch()
    survivors = []
    try:
        print(f"{'mutant':<72} {'caught':<7} {'seconds':>8}")
        for mutant in chosen:
            caught, seconds, tail = _run(mutant, copy)
            print(f"{mutant.name:<72} {'yes' if caught else 'NO':<7} {seconds:>8.1f}", flush=True)
            if not caught:
                survivors.append(mutant)
                print(f"  survivor: {mutant.path}: its guards passed:\n    " + tail.replace("\n", "\n    "))
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    print(summary(chosen, survivors))
    return 1 if survivors else 0


def summary(chosen: list[Mutant], survivors: list[Mutant]) -> str:
    """caught/total, then per area of the contract, then each survivor by name."""
    def caught(of: list[Mutant]) -> str:
        return f"{len([m for m in of if m not in survivors])}/{len(of)}"

    lines = [f"caught {caught(chosen)} mutants"]
    areas = [(area, [m for m in chosen if m.area == area]) for area in (*AREAS, "")]
    lines += [f"  {area or 'other rules'}: {caught(of)}" for area, of in areas if of]
    lines += [f"survivors ({len(survivors)}):", *(f"  {m.name} ({m.path})" for m in survivors)] if survivors \
        else ["survivors: none"]
    return "\n".join(lines)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
