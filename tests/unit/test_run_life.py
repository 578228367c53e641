"""One run folder's lifecycle (runtime/run_folder.RunLife), which apply/destroy, plan and the
reconcile runs that change a record all keep: meta.json first, then the store's journal of
it; at the close meta.json's end and result.json last, then the journal's result. A crash
between two steps leaves the ones before it, so what each step finds already written is
what these tests read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base import notices
from hybridops_tf.record import layout
from hybridops_tf.runtime.run_folder import RunLife, RunNotOpened

KEY = "demo__vm"


class Meta:
    def __init__(self) -> None:
        self.engine: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"command": "apply", "run_id": "apply-1", "engine": self.engine}


class Journal:
    """A store's journal that notes, at each entry, what the run folder already holds."""

    def __init__(self, root: Path, fail: str | None = None) -> None:
        self.folder = layout.run_dir(root, KEY, "apply-1")
        self.fail = fail
        self.seen: list[tuple[str, bool, bool, bool]] = []  # (kind, meta.json, its end, result.json)

    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None:
        if kind == self.fail:
            raise OSError(28, "No space left on device")
        meta = self.folder / "meta.json"
        ended = meta.is_file() and "exit_code" in json.loads(meta.read_text())
        self.seen.append((kind, meta.is_file(), ended, (self.folder / "result.json").is_file()))

    def describe(self) -> str:
        return "the test store"


def _open(tmp_path: Path, journal: Journal | None) -> RunLife:
    return RunLife.open(tmp_path, KEY, "apply-1", Meta(), journal)


def test_a_run_journals_its_meta_after_meta_json_and_its_result_after_result_json(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    life = _open(tmp_path, journal)
    assert journal.seen == [("meta", True, False, False)]
    assert life.folder.path == journal.folder

    life.close(0, {"outcome": "ok"})

    assert journal.seen[1] == ("result", True, True, True)
    assert json.loads(life.folder.result_path.read_text())["exit_code"] == 0


def test_the_close_writes_the_meta_as_the_run_left_it(tmp_path: Path) -> None:
    life = _open(tmp_path, None)
    assert json.loads((life.folder.path / "meta.json").read_text())["engine"] is None
    assert isinstance(life.meta, Meta)
    life.meta.engine = "terraform 1.0.3"  # preflight found the engine after the run opened

    life.close(1, {"outcome": "error"})

    meta = json.loads((life.folder.path / "meta.json").read_text())
    assert (meta["engine"], meta["exit_code"]) == ("terraform 1.0.3", 1)


def test_a_body_that_raises_is_closed_with_what_its_caller_makes_of_the_error(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    life = _open(tmp_path, journal)

    with pytest.raises(KeyError), life.closing(lambda err: (4, {"outcome": "refused", "error": str(err)})):
        raise KeyError("locked")

    result = json.loads(life.folder.result_path.read_text())
    assert (result["exit_code"], result["outcome"]) == (4, "refused")
    assert [kind for kind, *_ in journal.seen] == ["meta", "result"]


def test_an_error_its_caller_leaves_unwritten_leaves_the_run_unfinished_as_a_crash_does(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    life = _open(tmp_path, journal)

    with pytest.raises(ZeroDivisionError), life.closing(lambda err: None):
        raise ZeroDivisionError

    assert not life.folder.result_path.exists()
    assert [kind for kind, *_ in journal.seen] == ["meta"]


def test_a_body_that_closed_its_run_is_not_closed_again_when_it_raises_after(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    life = _open(tmp_path, journal)

    with pytest.raises(RuntimeError), life.closing(lambda err: (1, {"outcome": "failed"})):
        life.close(0, {"outcome": "ok"})
        raise RuntimeError

    assert json.loads(life.folder.result_path.read_text())["outcome"] == "ok"
    assert [kind for kind, *_ in journal.seen] == ["meta", "result"]


def test_a_journal_that_cannot_take_the_meta_leaves_meta_json_alone_and_no_result(tmp_path: Path) -> None:
    journal = Journal(tmp_path, fail="meta")

    with pytest.raises(RunNotOpened) as info:
        _open(tmp_path, journal)

    assert info.value.step == "journal" and info.value.error.errno == 28
    assert (journal.folder / "meta.json").is_file() and not (journal.folder / "result.json").exists()


def test_an_unwritable_runs_folder_is_not_opened_and_names_the_folder_step(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("a file where the runs folder should be")
    journal = Journal(tmp_path)

    with pytest.raises(RunNotOpened) as info:
        _open(tmp_path, journal)

    assert info.value.step == "folder" and journal.seen == []


def test_a_journal_that_cannot_take_the_result_is_a_warning_after_result_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(notices, "warning", warned.append)
    journal = Journal(tmp_path, fail="result")
    life = _open(tmp_path, journal)

    life.close(0, {"outcome": "ok"})

    assert life.folder.result_path.is_file()
    assert len(warned) == 1 and "apply-1" in warned[0] and "the test store" in warned[0]
