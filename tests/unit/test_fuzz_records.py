"""Hostile records (latest.json contents): read as a record or refused as corrupt (exit 2,
file kept byte for byte), never a traceback; status never crashes on them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from hybridops_tf.cli.main import cli
from hybridops_tf.operation import run_inputs
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.model import CorruptRecordError, OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.store.local import RecordStore
from tests.reliability.figures import FUZZ, note
from tests.reliability.strategies import CLI, PURE, deep, json_values

STATUSES = ["running", "ok", "error", "destroyed", "absent", "retained", "pending", "", "OK"]
_FIELDS = ["module_dir", "active_command", "failed_command", "last_error", "started_at", "owner",
           "resolved_inputs_file", "rerun_inputs_file", "inputs_digest", "workspace", "outputs",
           "resources", "suspect_orphans", "previous_outputs", "engine", "future_field"]
owners = st.one_of(json_values, st.fixed_dictionaries(
    {"pid": st.one_of(st.integers(), st.text(max_size=5), json_values), "host": json_values,
     "user": json_values, "run_id": json_values}))
resources = st.one_of(json_values, st.dictionaries(
    st.text(max_size=10), st.one_of(json_values, st.fixed_dictionaries(
        {"status": json_values}, optional={"action": json_values, "id": json_values,
                                           "tainted": json_values})), max_size=3))
orphans = st.one_of(json_values, st.lists(st.one_of(json_values, st.fixed_dictionaries(
    {"address": json_values}, optional={"action": json_values, "run_id": json_values,
                                        "at": json_values})), max_size=3))
near_valid = st.builds(
    lambda sv, status, ref, run, at, extra: {"schema_version": sv, "module_ref": ref,
                                             "status": status, "run_id": run, "updated_at": at, **extra},
    st.one_of(st.just(1), st.sampled_from([0, 2, True, 1.0, "1", None])),
    st.one_of(st.sampled_from(STATUSES), json_values),
    st.one_of(st.just("fuzz"), json_values),
    st.one_of(st.just("apply-20260101T000000Z-00000000"), json_values),
    st.one_of(st.just("2026-01-01T00:00:00Z"), json_values),
    st.dictionaries(st.sampled_from(_FIELDS), st.one_of(json_values, owners, resources, orphans),
                    max_size=6),
)
records = st.one_of(near_valid, json_values)


@PURE
@given(records)
def test_record_parses_or_is_refused_with_value_error_and_round_trips(doc: object) -> None:
    note(FUZZ, target="OperationRecord.from_dict")
    try:
        rec = OperationRecord.from_dict(doc)
    except ValueError:
        return
    again = OperationRecord.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert again.to_dict() == rec.to_dict()


@PURE
@given(st.one_of(records.map(json.dumps), st.binary(max_size=60), st.text(max_size=60)))
@example(b"")
@example(b'{"schema_version": 1, "status": "ok", trunc')
@example(b"\xff\xfe")
def test_stored_record_reads_or_is_refused_as_corrupt(tmp_path_factory: pytest.TempPathFactory,
                                                      content: str | bytes) -> None:
    note(FUZZ, target="RecordStore.read")
    root = tmp_path_factory.mktemp("rt")
    store = RecordStore(root)
    path = store.record_path("fuzz")
    path.parent.mkdir(parents=True)
    data = content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    try:
        store.read("fuzz")
    except CorruptRecordError as err:
        assert err.exit_code == 2 and str(path) in err.message
    assert path.read_bytes() == data


def test_deeply_nested_record_is_reported_corrupt(tmp_path: Path) -> None:
    note(FUZZ, target="RecordStore.read (deep)")
    store = RecordStore(tmp_path)
    path = store.record_path("fuzz")
    path.parent.mkdir(parents=True)
    path.write_text(deep(100_000))
    with pytest.raises(CorruptRecordError):
        store.read("fuzz")


# ----- through the CLI --------------------------------------------------------------------

MODULE_TF = 'resource "terraform_data" "x" {\n  input = "x"\n}\n'


@pytest.fixture
def cli_module(tmp_path: Path) -> tuple[Path, Path]:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text(MODULE_TF)
    root = tmp_path / "runtime"
    run_inputs.resolve(Runtime(root), ModuleTarget(module, "fuzz"), None, [], None)  # warm the cache
    lock = RecordStore(root).lock_path("fuzz")
    lock.parent.mkdir(parents=True, mode=0o700)
    lock.touch(mode=0o600)
    return module, root


def _files(root: Path) -> dict[str, tuple[int, int, bytes]]:
    return {str(p): (os.lstat(p).st_ino, os.lstat(p).st_mtime_ns, p.read_bytes())
            for p in root.rglob("*") if p.is_file()}


@CLI
@given(st.one_of(records.map(json.dumps), st.text(max_size=60)))
@example('{"schema_version": 1, "status": "ok", trunc')
@example('{"schema_version": 2, "module_ref": "fuzz", "status": "ok", "run_id": "r", "updated_at": "t"}')
def test_cli_status_reports_and_apply_refuses_a_hostile_record_without_traceback(
    cli_module: tuple[Path, Path], content: str
) -> None:
    module, root = cli_module
    path = RecordStore(root).record_path("fuzz")
    path.write_text(content, encoding="utf-8", errors="surrogatepass")
    try:
        RecordStore(root).read("fuzz")
        corrupt = False
    except CorruptRecordError:
        corrupt = True
    note(FUZZ, target="CLI status/apply on a hostile record", corrupt=corrupt)
    runner = CliRunner()
    base = ["--runtime-root", str(root), "--engine", "/nonexistent-engine"]

    status = runner.invoke(cli, [*base, "status", str(module), "--ref", "fuzz", "--json"])
    assert status.exit_code in (0, 3), (status.output, status.exc_info)
    if not corrupt:
        assert json.loads(status.stdout) == json.loads(content)
    listing = runner.invoke(cli, [*base, "status", "--all"])
    assert listing.exit_code in (0, 3), (listing.output, listing.exc_info)

    if corrupt:  # a corrupt record is never overwritten: exit 2, everything kept
        before = _files(root)
        result = runner.invoke(cli, [*base, "apply", str(module), "--ref", "fuzz"])
        assert result.exit_code == 2, (result.output, result.exc_info)
        assert isinstance(result.exception, SystemExit)
        assert str(path) in result.stderr
        assert _files(root) == before, "a refused apply changed the runtime root"
