"""The Documents capability (store/ports.py) as every store without a server keeps it (the
`serverless` fixture, tests/unit/serverless_stores.py): the local root (store/localdocs.py:
the files themselves) and the SQLite store (its copy, then the local file). The PostgreSQL
store's leg is the integration tests marked both_stores."""

from __future__ import annotations

from hybridops_tf.record import layout
from hybridops_tf.store.documents import DRIFT_SEEN, RERUN_INPUTS, STACK_REPORT
from tests.unit.serverless_stores import Serverless


def test_a_put_document_is_the_local_file_every_reader_uses(serverless: Serverless) -> None:
    store = serverless.open("rt")
    root = serverless.base / "rt"

    store.put_document(RERUN_INPUTS, "platform/network@stg", "a: 1\n")
    store.put_document(STACK_REPORT, "demo", "{}\n")
    store.put_document(DRIFT_SEEN, "platform/network", "{\"x\": 1}\n")

    rerun = layout.rerun_inputs(root, "platform/network@stg")
    assert store.fetch_document(RERUN_INPUTS, "platform/network@stg") == rerun
    assert rerun.read_text() == "a: 1\n"
    assert layout.stack_report(root, "demo").read_text() == "{}\n"
    assert layout.drift_seen(root, "platform/network").read_text() == "{\"x\": 1}\n"
    assert layout.rerun_inputs(root, "platform/network@stg").stat().st_mode & 0o777 == 0o600


def test_a_document_replaced_reads_as_its_last_text_and_a_missing_one_as_no_file(serverless: Serverless) -> None:
    store = serverless.open("rt")

    store.put_document(STACK_REPORT, "demo", "first\n")
    store.put_document(STACK_REPORT, "demo", "second\n")

    assert store.fetch_document(STACK_REPORT, "demo").read_text() == "second\n"
    assert not store.fetch_document(STACK_REPORT, "never").exists()


def test_lines_are_read_back_in_order_until_dropped(serverless: Serverless) -> None:
    store = serverless.open("rt")

    for line in ("a", "b", "c"):
        store.append_document_line(STACK_REPORT, "demo", "run-1", line)
    assert store.document_lines(STACK_REPORT, "demo", "run-1") == ["a", "b", "c"]
    store.drop_document_lines(STACK_REPORT, "demo")
    assert store.document_lines(STACK_REPORT, "demo", "run-1") == []
    store.append_document_line(STACK_REPORT, "demo", "run-2", "d")
    assert store.document_lines(STACK_REPORT, "demo", "run-2") == ["d"]


def test_another_root_reads_the_document_only_where_the_store_spans_roots(serverless: Serverless) -> None:
    here, there = serverless.open("here"), serverless.open("there")

    here.put_document(RERUN_INPUTS, "net", "a: 1\n")
    here.append_document_line(STACK_REPORT, "demo", "run-1", "a")

    seen = there.fetch_document(RERUN_INPUTS, "net")
    assert seen == layout.rerun_inputs(serverless.base / "there", "net")  # always this root's own file
    assert seen.exists() is here.spans_roots
    assert there.document_lines(STACK_REPORT, "demo", "run-1") == (["a"] if here.spans_roots else [])
