"""The contract's refusal paths, without an engine: pytest-subprocess fails the test if
any process other than the registered read-only ones is started."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.base.errors import ExitCode, RefusedError
from hybridops_tf.cli.main import cli
from hybridops_tf.engine import initcheck, process
from hybridops_tf.operation import steps
from hybridops_tf.operation.request import ModuleRequest
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.store.local import RecordStore

VERSION_JSON = json.dumps({"terraform_version": "1.0.3", "platform": "linux_amd64"})


@pytest.fixture(autouse=True)
def _no_stale_signal() -> None:
    process.FORWARDER.received = None


@pytest.fixture
def engine(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "terraform"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\nexit 99\n")  # never really run: pytest-subprocess answers
    path.chmod(0o755)
    return path


@pytest.fixture
def module(tmp_path: Path) -> ModuleTarget:
    directory = tmp_path / "mod"
    (directory / ".terraform").mkdir(parents=True)
    (directory / "main.tf").write_text('output "x" {\n  value = 1\n}\n')
    initcheck.remember_init(directory, tmp_path / "root" / "cache" / "init")  # no init needed
    return ModuleTarget(directory, "unit/mod")


def _request(module: ModuleTarget, root: Path, engine: Path, **kw: object) -> ModuleRequest:
    return ModuleRequest(command="apply", target=module, runtime=Runtime(root, str(engine)),
                                   on_stderr=None, **kw)


def test_a_running_record_that_cannot_be_written_refuses_and_starts_no_engine(
    fp, module: ModuleTarget, engine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fp.register([str(engine), "version", "-json"], stdout=VERSION_JSON)
    root = tmp_path / "root"

    def refuse(self: RecordStore, record: OperationRecord) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(RecordStore, "write", refuse)

    with pytest.raises(RefusedError) as info:
        steps.run(_request(module, root, engine))

    assert info.value.exit_code == ExitCode.REFUSED
    assert "engine was not started" in info.value.message
    assert fp.call_count([str(engine), fp.any()]) == 1  # only `version -json`


def test_a_stale_running_record_refuses_apply_before_any_engine_mutation(
    fp, module: ModuleTarget, engine: Path, tmp_path: Path
) -> None:
    fp.register([str(engine), "version", "-json"], stdout=VERSION_JSON)
    root = tmp_path / "root"
    store = RecordStore(root)
    store.write(OperationRecord(module_ref="unit/mod", status=Status.RUNNING, run_id="apply-x",
                                active_command="apply"))
    before = store.record_path("unit/mod").read_bytes()

    with pytest.raises(RefusedError) as info:
        steps.run(_request(module, root, engine))

    assert "stale" in info.value.message and "hyops reconcile" in info.value.message
    assert store.record_path("unit/mod").read_bytes() == before
    assert fp.call_count([str(engine), fp.any()]) == 1


def test_an_engine_that_is_not_there_is_one_line_and_exit_2(tmp_path: Path, module: ModuleTarget) -> None:
    result = CliRunner().invoke(
        cli, ["--runtime-root", str(tmp_path / "root"), "--engine", str(tmp_path / "nope"),
              "apply", str(module.directory), "--ref", "unit/mod"],
    )
    assert result.exit_code == ExitCode.USAGE  # a set-up error (issue 11 item 8): nothing ran
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--engine" in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "root" / "state" / "modules" / "unit__mod" / "latest.json").exists()


def test_engine_crash_mid_stream_settles_error_and_keeps_the_raw_lines(
    fp, module: ModuleTarget, engine: Path, tmp_path: Path
) -> None:
    fp.register([str(engine), "version", "-json"], stdout=VERSION_JSON)
    start = json.dumps({"type": "apply_start", "hook": {"resource": {"addr": "x.y"}, "action": "create"}})
    # the apply is real (its stdout goes through the event relay, a real process too): a
    # line, half a line, then SIGKILL
    fp.allow_unregistered(True)
    partial = '{"type": "apply_prog'
    engine.write_text(f"#!/bin/sh\n[ \"$2\" = apply ] || exit 99\n"
                      f"printf '%s\\n%s' {shlex.quote(start)} {shlex.quote(partial)}\nkill -9 $$\n")
    fp.register([str(engine), f"-chdir={module.directory}", "show", fp.any()],
                stdout=json.dumps({"format_version": "0.2"}))
    root = tmp_path / "root"

    outcome = steps.run(_request(module, root, engine))

    assert outcome.exit_code == ExitCode.FAILED
    rec = RecordStore(root).read("unit/mod")
    assert rec is not None and rec.status is Status.ERROR and rec.failed_command == "apply"
    assert [o.address for o in rec.suspect_orphans] == ["x.y"]
    events = (outcome.run_dir / "events.jsonl").read_text().splitlines()
    assert events == [start, '{"type": "apply_prog']
    assert (outcome.run_dir / "result.json").exists()


@pytest.mark.parametrize("failure", [PermissionError(13, "Permission denied"), ValueError("embedded null byte")])
def test_an_engine_that_cannot_be_spawned_settles_error_saying_nothing_ran(
    fp, module: ModuleTarget, engine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    fp.register([str(engine), "version", "-json"], stdout=VERSION_JSON)
    root = tmp_path / "root"
    store = RecordStore(root)
    store.write(OperationRecord(module_ref="unit/mod", status=Status.OK, run_id="apply-old", outputs={"x": 1}))
    fp.allow_unregistered(True)  # the event relay, spawned before the engine, is real
    real_popen = process.subprocess.Popen

    def popen(argv, *args, **kwargs):  # the version probe runs; the apply cannot start
        if "apply" in argv:
            raise failure
        return real_popen(argv, *args, **kwargs)

    monkeypatch.setattr(process.subprocess, "Popen", popen)

    outcome = steps.run(_request(module, root, engine))

    assert outcome.exit_code == ExitCode.FAILED
    rec = store.read("unit/mod")
    assert rec is not None and rec.status is Status.ERROR and rec.failed_command == "apply"
    assert "never started, so nothing changed" in (rec.last_error or "")
    assert rec.outputs == {"x": 1} and rec.active_command is None and rec.owner is None
    assert json.loads((outcome.run_dir / "result.json").read_text())["outcome"] == "error"


def test_a_request_built_with_a_plain_command_string_carries_its_command(module: ModuleTarget, tmp_path: Path) -> None:
    from hybridops_tf.record.lifecycle import Command

    req = ModuleRequest(command="destroy", target=module, runtime=Runtime(tmp_path / "root"))

    assert req.command is Command.DESTROY
    with pytest.raises(ValueError):
        ModuleRequest(command="launch", target=module, runtime=Runtime(tmp_path / "root"))
