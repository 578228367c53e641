"""rootfind.py: the default runtime root is the nearest `.hyops/` walking up (docs/contract.md:
Commands and options)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hybridops_tf.runtime import discover as rootfind
from hybridops_tf.runtime.discover import HOW_ENV, HOW_FOUND, HOW_NEW, HOW_OPTION, discover


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """tmp/project/stk/deep, searched with tmp_path as the ceiling (nothing above is read)."""
    deep = tmp_path / "project" / "stk" / "deep"
    deep.mkdir(parents=True)
    return tmp_path / "project"


def test_the_nearest_hyops_above_the_current_directory_is_the_root(project: Path, tmp_path: Path) -> None:
    (project / ".hyops").mkdir()

    choice = discover(project / "stk" / "deep", [tmp_path])

    assert (choice.path, choice.how) == (project / ".hyops", HOW_FOUND)


def test_the_nearest_of_two_wins(project: Path, tmp_path: Path) -> None:
    (project / ".hyops").mkdir()
    (project / "stk" / ".hyops").mkdir()

    assert discover(project / "stk" / "deep", [tmp_path]).path == project / "stk" / ".hyops"


def test_without_any_hyops_the_root_is_a_new_one_in_the_current_directory(project: Path, tmp_path: Path) -> None:
    choice = discover(project / "stk", [tmp_path])

    assert (choice.path, choice.how, choice.skipped) == (project / "stk" / ".hyops", HOW_NEW, ())
    assert not choice.path.exists()  # discovery creates nothing


def test_a_ceiling_directory_and_what_is_above_it_are_never_searched(project: Path, tmp_path: Path) -> None:
    (tmp_path / ".hyops").mkdir()
    (project / ".hyops").mkdir()

    assert discover(project / "stk", [project]).how == HOW_NEW
    assert discover(project / "stk", [tmp_path]).path == project / ".hyops"
    assert discover(project, [project]).path == project / ".hyops"  # the start itself always is


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_hyops_that_is_no_directory_of_ours_is_skipped_with_a_reason(
    project: Path, tmp_path: Path, kind: str
) -> None:
    (project / ".hyops").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stray = project / "stk" / ".hyops"
    if kind == "file":
        stray.write_text("not a root")
    else:
        stray.symlink_to(elsewhere)

    choice = discover(project / "stk" / "deep", [tmp_path])

    assert choice.path == project / ".hyops"
    assert len(choice.skipped) == 1 and str(stray) in choice.skipped[0]


def test_another_users_hyops_is_skipped(project: Path, tmp_path: Path) -> None:
    (project / ".hyops").mkdir()

    choice = discover(project / "stk", [tmp_path], uid=os.geteuid() + 1)

    assert choice.how == HOW_NEW
    assert "uid" in choice.skipped[0]


def test_an_explicit_root_is_used_as_given_and_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".hyops").mkdir()

    assert rootfind.choose(Path("rt"), HOW_ENV, tmp_path, {}) == rootfind.RootChoice(tmp_path / "rt", HOW_ENV)
    assert rootfind.choose(None, HOW_OPTION, tmp_path, {}).how == HOW_FOUND


def test_ceilings_come_from_the_environment_and_relative_entries_are_ignored(tmp_path: Path) -> None:
    value = os.pathsep.join([str(tmp_path), "relative/dir", ""])

    assert rootfind.ceilings_from_env(value) == (Path(os.path.realpath(tmp_path)),)


def test_a_missing_or_empty_root_is_reported_and_one_with_records_is_not(tmp_path: Path) -> None:
    root = tmp_path / ".hyops"
    choice = rootfind.RootChoice(root, HOW_FOUND)
    assert "does not exist" in (rootfind.emptiness_warning(choice) or "")
    root.mkdir()
    assert "holds no records" in (rootfind.emptiness_warning(choice) or "")
    record = root / "state" / "modules" / "net" / "latest.json"
    record.parent.mkdir(parents=True)
    record.write_text("{}")
    assert rootfind.emptiness_warning(choice) is None
    assert rootfind.record_count(root) == 1
