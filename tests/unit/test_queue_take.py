"""A worker's stack load (stack/queue/take.py), without a queue or an engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.record.layout import hcl_cache
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.graph import RunGraph
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
