"""A worker's stack load (stack/queue/take.py), without a queue or an engine."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hybridops_tf.record.layout import hcl_cache
from hybridops_tf.record.lifecycle import MemberStatus, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.graph import RunGraph
from hybridops_tf.stack.member import MemberResult, MemberSteps
from hybridops_tf.stack.queue import jobs, progress, tables, view
from hybridops_tf.stack.queue.submit import stack_digest
from hybridops_tf.stack.queue.tables import QueuedRun, RunOptions
from hybridops_tf.stack.queue.take import CannotServe, Taker

MODULE = 'variable "name" {\n  type = string\n}\n\noutput "id" {\n  value = var.name\n}\n'


def _run(stack_file: Path) -> QueuedRun:
    graph = RunGraph(dependencies={}, order=(), success=frozenset({MemberStatus.OK}), groups={})
    return QueuedRun(run_id="apply-1", stack="two", stack_file=stack_file.name, stack_digest=stack_digest(stack_file),
                     command="apply", options=RunOptions(), graph=graph, queued_by="test", started_at="now")


def test_a_workers_stack_load_keeps_the_parse_of_every_members_module_not_only_those_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "main.tf").write_text(MODULE)
    stack_file = tmp_path / "stack.yml"
    stack_file.write_text("stack: two\nmodules:\n  - {name: a, path: a, inputs: {name: x}}\n"
                          "  - {name: b, path: b, depends_on: [a], inputs_from: {name: a.id}}\n"
                          "  - {name: c, path: c, inputs: {name: y}}\n")
    monkeypatch.chdir(tmp_path)
    runtime = Runtime(tmp_path / ".hyops")
    taker = Taker("w0", runtime, connections=None)  # type: ignore[arg-type]  # loading asks no queue

    stack = taker.stack_of(_run(stack_file))

    assert [m.name for m in stack.members] == ["a", "b", "c"]
    # the runner's next worker loads the stack from these, without python-hcl2 (~0.15 s a process)
    assert len(list(hcl_cache(runtime.root).glob("*.json"))) == 3


def test_a_stack_a_worker_cannot_serve_keeps_no_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "main.tf").write_text(MODULE)
    stack_file = tmp_path / "stack.yml"
    stack_file.write_text("stack: two\nmodules:\n  - {name: a, path: a, inputs: {nme: x}}\n")
    monkeypatch.chdir(tmp_path)
    runtime = Runtime(tmp_path / ".hyops")
    taker = Taker("w0", runtime, connections=None)  # type: ignore[arg-type]

    with pytest.raises(CannotServe, match="cannot run apply-1 here"):
        taker.stack_of(_run(stack_file))
    assert not (runtime.root).exists()


def _one_member(tmp_path: Path) -> Path:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "main.tf").write_text(MODULE)
    stack_file = tmp_path / "stack.yml"
    stack_file.write_text("stack: one\nmodules:\n  - {name: a, path: a, inputs: {name: x}}\n")
    return stack_file


def test_a_stack_file_edited_between_queue_and_work_is_not_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   ) -> None:
    stack_file = _one_member(tmp_path)
    run = _run(stack_file)
    # still a valid stack: only the digest of what was queued tells it apart
    stack_file.write_text(stack_file.read_text().replace("name: x", "name: y"))
    monkeypatch.chdir(tmp_path)
    taker = Taker("w0", Runtime(tmp_path / ".hyops"), connections=None)  # type: ignore[arg-type]

    with pytest.raises(CannotServe, match="differs from the one queued"):
        taker.stack_of(run)


@pytest.mark.parametrize("wrote_a_record", [False, True], ids=["nothing-ran", "its-record-changed"])
def test_a_member_is_retried_only_when_nothing_could_have_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wrote_a_record: bool,
) -> None:
    """The step says its failure may pass (retryable); the member's record alone says whether
    anything ran: a record written since the claim means something did, and it is never retried."""
    stack_file = _one_member(tmp_path)
    monkeypatch.chdir(tmp_path)
    runtime = Runtime(tmp_path / ".hyops")
    runtime.ensure_root()
    idle_checked = SimpleNamespace(port=SimpleNamespace(check_idle_connection=lambda: None))
    taker = Taker("w0", runtime, connections=idle_checked)  # type: ignore[arg-type]
    monkeypatch.setattr(Taker, "_upstreams", lambda *_a: {})

    def step(_steps: MemberSteps, name: str) -> MemberResult:
        if wrote_a_record:  # its run wrote `running`, then its engine failed
            runtime.store.write(OperationRecord(module_ref=taker.stack_of(run).member(name).module_ref,
                                                status=Status.ERROR, run_id="apply-2"))
        return MemberResult(MemberStatus.ERROR, error="the engine failed", changed=False, retryable=True)

    monkeypatch.setattr(MemberSteps, "step", step)
    run = _run(stack_file)

    result, served = taker._run(run, "a")

    assert result.retryable is not wrote_a_record and served


class _Connections:
    """Lends a connection whose transactions do nothing: the queue's tables are replaced below."""

    port = None  # the store's queue port: view.publish, which would use it, is replaced below

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        yield SimpleNamespace(transaction=contextlib.nullcontext)


@pytest.mark.parametrize("attempts", range(jobs.RETRIES + 1))
def test_a_member_that_may_pass_is_retried_at_most_retries_times_then_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attempts: int,
) -> None:
    run = _run(_one_member(tmp_path))
    taker = Taker("w0", Runtime(tmp_path / ".hyops"), connections=_Connections())  # type: ignore[arg-type]
    said: list[str] = []
    monkeypatch.setattr(Taker, "_claim", lambda *_a: run)
    monkeypatch.setattr(Taker, "_deferring_app", lambda _self: None)
    monkeypatch.setattr(Taker, "_run", lambda *_a: (MemberResult(MemberStatus.ERROR, error="lock busy",
                                                                 changed=False, retryable=True), True))
    monkeypatch.setattr(tables, "lock_run", lambda *_a: run)
    monkeypatch.setattr(view, "publish", lambda *_a: None)
    monkeypatch.setattr(progress, "requeue", lambda *_a: said.append("requeued") or True)
    monkeypatch.setattr(progress, "end_member", lambda *_a, **_k: said.append("ended") or True)
    job = SimpleNamespace(job=SimpleNamespace(id=7, attempts=attempts))

    if attempts < jobs.RETRIES:
        with pytest.raises(jobs.NotYetRun):
            taker.job(job, run.run_id, "a")
        assert said == ["requeued"]
    else:  # its last try: the member ends, as it failed
        taker.job(job, run.run_id, "a")
        assert said == ["ended"]
