"""docs/contract.md covers the CLI as Click builds it, the docs link only inside the repo (to
headings that exist), and the README stays a README that indexes every page of docs/.

The CLI tree is read from Click (`hybridops_tf.cli.main:cli`, a LazyGroup, walked through
every group), so a command or option added without its line in the contract fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from hybridops_tf.cli.main import cli
from tests.unit.clitree import walk

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "docs" / "contract.md"
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def long_options(command: click.Command) -> list[str]:
    """Every visible `--name` (and `--no-name` secondary) the command itself declares."""
    names: list[str] = []
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            names += [n for n in (*param.opts, *param.secondary_opts) if n.startswith("--")]
    return names


def mentions(text: str, word: str) -> bool:
    """`word` (a command path or an option) appears whole: `--var` is not found in `--var-file`."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def command_row(doc: str, path: tuple[str, ...]) -> str | None:
    """The commands-table row of `hyops PATH` in the contract: the line that starts with it."""
    start = re.compile(rf"^\| `hyops {re.escape(' '.join(path))}(?=[ `])", re.M)
    match = start.search(doc)
    return doc[match.start(): doc.index("\n", match.start())] if match else None


def undocumented(doc: str) -> list[str]:
    """Commands without a row in the contract's commands table, and options their row (or, for
    the global options, the whole contract) does not name."""
    missing: list[str] = []
    for path, command in walk(cli):
        if not path:
            missing += [f"global option {o}" for o in long_options(command) if not mentions(doc, o)]
            continue
        if isinstance(command, click.Group) and not long_options(command):
            if not mentions(doc, "hyops " + " ".join(path)):
                missing.append(f"command group hyops {' '.join(path)}")
            continue
        row = command_row(doc, path)
        if row is None:
            missing.append(f"command hyops {' '.join(path)} (no commands-table row)")
            continue
        missing += [f"hyops {' '.join(path)} {o}" for o in long_options(command) if not mentions(row, o)]
    return missing


def test_every_command_and_option_is_in_the_contract() -> None:
    assert undocumented(CONTRACT.read_text(encoding="utf-8")) == []


def test_the_check_notices_an_option_the_contract_lacks() -> None:
    doc = CONTRACT.read_text(encoding="utf-8")
    row = command_row(doc, ("stack", "apply"))
    assert row is not None and "--resume" in row
    without = doc.replace(row, row.replace("`--resume`", ""))
    assert "hyops stack apply --resume" in undocumented(without)
    assert "command hyops version (no commands-table row)" in undocumented(
        doc.replace(command_row(doc, ("version",)) or "", ""))


def test_the_walk_reaches_subcommands() -> None:
    paths = {path for path, _ in walk(cli)}
    assert {("apply",), ("stack", "apply"), ("stack", "destroy"), ("sim", "ls")} <= paths


LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_PATH = re.compile(r"(?<![\w./-])(?:\.\./)?docs/[\w.-]+\.md")


def anchors(page: Path) -> set[str]:
    """The `#fragment` of every heading of a Markdown page, as GitHub makes them: lower case,
    punctuation but `-` and `_` dropped, spaces as `-` (headings inside code blocks are none)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.*)$", text, re.M)}


def bad_links(doc_file: Path, repo: Path = REPO) -> list[str]:
    """Links leaving the repository, absolute ones, and links or `docs/X.md` names to files that
    do not exist; pointers to ../shared (not in a clone) by any spelling."""
    text = doc_file.read_text(encoding="utf-8")
    problems = [f"{doc_file.name}: names {m.group(0)!r}, outside the repository"
                for m in re.finditer(r"\.\./shared\b|/work/shared\b|DESIGN\.md", text)]
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # https:, mailto:, an anchor in the same page
        path = target.split("#", 1)[0]
        if path.startswith("/"):
            problems.append(f"{doc_file.name}: absolute link {target!r}")
            continue
        resolved = (doc_file.parent / path).resolve()
        if not resolved.is_relative_to(repo):
            problems.append(f"{doc_file.name}: link {target!r} leaves the repository")
        elif not resolved.exists():
            problems.append(f"{doc_file.name}: link {target!r} names a missing file")
        elif "#" in target and resolved.suffix == ".md" and target.split("#", 1)[1] not in anchors(resolved):
            problems.append(f"{doc_file.name}: link {target!r} names a missing heading")
    for name in DOCS_PATH.findall(text):
        base = doc_file.parent if name.startswith("../") else repo
        if not (base / name).resolve().exists():
            problems.append(f"{doc_file.name}: names missing {name!r}")
    return problems


@pytest.mark.parametrize("doc_file", DOC_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_docs_link_only_to_files_in_the_repository(doc_file: Path) -> None:
    assert bad_links(doc_file) == []


def test_the_link_check_notices_outside_and_missing_targets(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "x.md"
    doc.write_text("See `../shared/DESIGN.md`, [a](/etc/passwd), [b](../../../outside.md), "
                   "[c](docs/nope.md), [ok](https://example.com), [top](#top), [d](docs/p.md#gone), "
                   "[e](docs/p.md#the-page-s-part).\n", encoding="utf-8")
    (tmp_path / "docs" / "p.md").write_text("# Page\n\n## The `page`-s part\n\n```\n# gone\n```\n")
    found = bad_links(doc, tmp_path)
    assert any("outside the repository" in p for p in found)
    assert any("absolute link" in p for p in found)
    assert any("leaves the repository" in p for p in found)
    assert any("missing file" in p for p in found)
    assert [p for p in found if "missing heading" in p] == ["x.md: link 'docs/p.md#gone' names a missing heading"]
    assert not any("example.com" in p or "#top" in p for p in found)


def test_the_readme_links_the_contract_and_the_migration_guide() -> None:
    targets = set(LINK.findall((REPO / "README.md").read_text(encoding="utf-8")))
    assert {"docs/contract.md", "docs/from-raw-tofu.md"} <= targets


def test_the_readme_indexes_every_docs_page_and_contributing() -> None:
    """The manual lives in docs/, one page a topic; the README's index reaches every page."""
    targets = {t.split("#", 1)[0] for t in LINK.findall((REPO / "README.md").read_text(encoding="utf-8"))}
    pages = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")} | {"CONTRIBUTING.md"}
    assert sorted(pages - targets) == []


def test_contributing_layout_names_every_room_of_the_package() -> None:
    """A newcomer finds each folder's job in CONTRIBUTING.md's layout table (a row per folder;
    a subfolder named in its parent's row)."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip().strip("`") for line in layout.splitlines() if line.startswith("| `")}
    package = REPO / "hybridops_tf"
    folders = {p.name + "/" for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert sorted(folders - rows) == []
    nested = [p.relative_to(package).as_posix() for p in package.glob("*/*") if p.is_dir() and p.name != "__pycache__"]
    assert [n for n in nested if f"`{n.split('/', 1)[1]}/`" not in layout] == []


def test_the_readme_is_a_readme() -> None:
    """What it is, install, set-up, a short story, the commands, exit codes, an index: the rest
    is in docs/ (issue 24 item 6)."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: move the detail to a page in docs/"


def test_code_and_tests_cite_the_repository_docs_not_a_design_note_outside_it() -> None:
    """Readers of the code have only the repository: a docstring points to docs/, never to a
    design document the repository does not contain."""
    cited = [f"{path.relative_to(REPO)}:{n}" for folder in ("hybridops_tf", "tests", "scripts", "bench")
             for path in sorted((REPO / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"DESIGN §|DESIGN\.md", line) and path.name != "test_docs_contract.py"]

    assert cited == []


def test_every_finding_code_and_exit_code_is_in_the_contract() -> None:
    from hybridops_tf.base.bugs import BUG_EXIT
    from hybridops_tf.base.errors import ExitCode
    from hybridops_tf.reconcile.model import Code

    text = CONTRACT.read_text(encoding="utf-8")
    assert [c.value for c in Code if f"`{c.value}`" not in text] == []
    codes = {int(n) for n in re.findall(r"^\| `(\d+)` \|", text, flags=re.MULTILINE)}
    assert {int(c) for c in ExitCode} | {BUG_EXIT} <= codes
