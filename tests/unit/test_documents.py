"""The Documents capability (store/ports.py) as every store without a server keeps it: the
local root (store/localdocs.py: the files themselves) and the SQLite store (its copy, then the
local file). The PostgreSQL store's leg is the integration tests marked both_stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hybridops_tf.record import layout
from hybridops_tf.store import Store, open_store
from hybridops_tf.store.documents import DRIFT_SEEN, RERUN_INPUTS, STACK_REPORT
from hybridops_tf.store.url import configure


@pytest.fixture(params=["local", "sqlite"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(the store's URL or "", the folder of its runtime roots); open(root) opens it there."""
    url = ""
    if request.param == "sqlite":
        (tmp_path / "db").mkdir(mode=0o700)
        url = f"sqlite:///{tmp_path / 'db' / 'h.db'}"
    yield url, tmp_path


def store_at(opened: tuple[str, Path], root: str) -> Store:
    url, base = opened
    configure(url or None)
    try:
        return open_store(base / root)
    finally:
        configure(None)


def test_a_put_document_is_the_local_file_every_reader_uses(opened: tuple[str, Path]) -> None:
    store = store_at(opened, "rt")
    root = opened[1] / "rt"

    store.put_document(RERUN_INPUTS, "platform/network@stg", "a: 1\n")
    store.put_document(STACK_REPORT, "demo", "{}\n")
    store.put_document(DRIFT_SEEN, "platform/network", "{\"x\": 1}\n")

    rerun = layout.rerun_inputs(root, "platform/network@stg")
    assert store.fetch_document(RERUN_INPUTS, "platform/network@stg") == rerun
    assert rerun.read_text() == "a: 1\n"
    assert layout.stack_report(root, "demo").read_text() == "{}\n"
    assert layout.drift_seen(root, "platform/network").read_text() == "{\"x\": 1}\n"
    assert layout.rerun_inputs(root, "platform/network@stg").stat().st_mode & 0o777 == 0o600


def test_a_document_replaced_reads_as_its_last_text_and_a_missing_one_as_no_file(opened: tuple[str, Path]) -> None:
    store = store_at(opened, "rt")

    store.put_document(STACK_REPORT, "demo", "first\n")
    store.put_document(STACK_REPORT, "demo", "second\n")

    assert store.fetch_document(STACK_REPORT, "demo").read_text() == "second\n"
    assert not store.fetch_document(STACK_REPORT, "never").exists()


def test_lines_are_read_back_in_order_until_dropped(opened: tuple[str, Path]) -> None:
    store = store_at(opened, "rt")

    for line in ("a", "b", "c"):
        store.append_document_line(STACK_REPORT, "demo", "run-1", line)
    assert store.document_lines(STACK_REPORT, "demo", "run-1") == ["a", "b", "c"]
    store.drop_document_lines(STACK_REPORT, "demo")
    assert store.document_lines(STACK_REPORT, "demo", "run-1") == []
    store.append_document_line(STACK_REPORT, "demo", "run-2", "d")
    assert store.document_lines(STACK_REPORT, "demo", "run-2") == ["d"]


def test_another_root_reads_the_document_only_where_the_store_spans_roots(opened: tuple[str, Path]) -> None:
    here, there = store_at(opened, "here"), store_at(opened, "there")

    here.put_document(RERUN_INPUTS, "net", "a: 1\n")
    here.append_document_line(STACK_REPORT, "demo", "run-1", "a")

    seen = there.fetch_document(RERUN_INPUTS, "net")
    assert seen == layout.rerun_inputs(opened[1] / "there", "net")  # always this root's own file
    assert seen.exists() is here.spans_roots
    assert there.document_lines(STACK_REPORT, "demo", "run-1") == (["a"] if here.spans_roots else [])
