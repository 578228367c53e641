"""Graph, markdown and HTML show the same status per member as `stack status --json`, for every
status in the vocabulary: a stack whose last report and records (written by hand, no engine)
hold each one, read back from the Mermaid flowchart (`stack graph --status --format mermaid`
and the block above `stack status --format markdown`'s table), the dot and text graphs, and the
HTML page's DOM (`hyops report --no-reconcile`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.picture.model import LOOKS
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.report import MemberEntry, StackReport, write_report
from hybridops_tf.store.local import RecordStore
from tests.readers import parse_mermaid, parse_table, plain

# member -> (status in the last run report, or None: not in it; its record's status, or None)
MEMBERS = {
    "net": ("ok", Status.OK),
    "vm": ("error", Status.ERROR),
    "cut": ("interrupted", Status.ERROR),  # a signal stopped its engine; its record settled error
    "cfg": ("pending", None),
    "later": ("cancelled", None),  # its queued run was withdrawn (`hyops stack cancel`) before a worker took it
    "old": ("destroyed", Status.DESTROYED),
    "gone": ("absent", None),
    "kept": ("retained", Status.RETAINED),
    "same": ("skipped", Status.OK),
    "busy": (None, Status.RUNNING),  # a running record nobody holds the lock of: stale
    "live": (None, Status.RUNNING),  # its lock held (by this test): running now
    "new": (None, None),  # never run: none
}
EXPECTED = {"net": "ok", "vm": "error", "cut": "interrupted", "cfg": "pending", "later": "cancelled",
            "old": "destroyed", "gone": "absent",
            "kept": "retained", "same": "skipped", "busy": "running", "live": "running", "new": "none"}


@pytest.fixture
def stack_file(tmp_path: Path) -> Path:
    root = tmp_path / "stack"
    lines = ["stack: vocab", "modules:"]
    for name in MEMBERS:
        (root / name).mkdir(parents=True)
        (root / name / "main.tf").write_text('variable "up" {\n  default = ""\n}\noutput "id" {\n  value = "x"\n}\n')
        lines += [f"  - name: {name}", f"    path: {name}"]
        if name == "cfg":
            lines += ["    depends_on: [vm]", "    inputs_from: {up: vm.id}"]
    (root / "stack.yml").write_text("\n".join(lines) + "\n")
    return root / "stack.yml"


@pytest.fixture
def runtime_root(tmp_path: Path) -> Path:
    root = tmp_path / "rt"
    records = RecordStore(root)
    for name, (_, status) in MEMBERS.items():
        if status is not None:
            records.write(OperationRecord(f"vocab/{name}", status, f"apply-{name}"))
    entries = [MemberEntry(name, f"vocab/{name}", status, run_id=f"apply-{name}" if status != "pending" else None,
                           blocked_by="vm" if status == "pending" else None,
                           error="boom" if status in ("error", "interrupted") else None)
               for name, (status, _) in MEMBERS.items() if status is not None]
    write_report(Runtime(root), StackReport("vocab", "stack.yml", "stack-apply-1", "apply", "2026-01-01T00:00:00Z",
                                   "2026-01-01T00:00:05Z", entries))
    return root


def hyops(root: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--runtime-root", str(root), "--engine", "/nonexistent/tofu", *args])
    assert result.exit_code == code, result.output
    return result.stdout


class _Dom(HTMLParser):
    """Every element's attributes, by tag."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


def dom(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Dom()
    parser.feed(text)
    return parser.elements


@pytest.fixture
def live_lock(runtime_root: Path) -> Iterator[None]:
    """The lock of member `live`, held as a running hyops would hold it."""
    with RecordStore(runtime_root).lock("vocab/live", "apply-live"):
        yield


@pytest.mark.usefixtures("live_lock")
def test_graph_markdown_and_html_show_the_status_stack_status_json_gives(
    stack_file: Path, runtime_root: Path, tmp_path: Path
) -> None:
    # member `busy` is a stale running record: its outcome is uncertain, so status exits 3
    as_json = {m["name"]: m["status"] for m in json.loads(hyops(runtime_root, "stack", "status", str(stack_file),
                                                                "--json", code=3))["members"]}
    assert as_json == EXPECTED  # the vocabulary is all there

    flow = parse_mermaid(hyops(runtime_root, "stack", "graph", str(stack_file), "--status", "--format",
                               "mermaid").splitlines())
    in_graph = {labels[0]: labels[1].split(" ", 1)[1] for labels in flow["nodes"].values()}
    kinds = {flow["nodes"][node][0]: kind for node, kind in flow["classes"].items()}

    markdown = hyops(runtime_root, "stack", "status", str(stack_file), "--format", "markdown", code=3).splitlines()
    block = markdown[markdown.index("```mermaid") + 1: markdown.index("```")]
    in_block = {labels[0]: labels[1].split(" ", 1)[1] for labels in parse_mermaid(block)["nodes"].values()}
    in_table = {plain(r["Member"]): plain(r["Status"]) for r in parse_table(markdown)}

    report = tmp_path / "out" / "report.html"
    hyops(runtime_root, "report", str(stack_file), "--html", str(report), "--no-reconcile")
    elements = dom(report.read_text(encoding="utf-8"))
    in_svg = {a["data-member"]: a["data-status"] for tag, a in elements if tag == "g" and a.get("class") == "node"}
    in_cards = {a["data-member"]: a["data-status"] for tag, a in elements if tag == "article"}

    dot = hyops(runtime_root, "stack", "graph", str(stack_file), "--status", "--format", "dot")
    text = hyops(runtime_root, "stack", "graph", str(stack_file), "--status")

    assert in_graph == in_block == in_table == in_svg == in_cards == as_json
    assert kinds == {**as_json, "busy": "stale"}  # drawn as stale: nobody runs it any more
    assert set(kinds.values()) == set(LOOKS)  # every look is exercised
    for name, status in as_json.items():
        assert f'"{name}\\n{LOOKS[kinds[name]].glyph} {status}' in dot
        assert f"  {name}: {LOOKS[kinds[name]].glyph} {status}" in text


def test_the_report_refuses_a_target_that_is_neither_a_stack_nor_a_module(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(tmp_path / "rt"), "report", str(tmp_path / "nope"),
                                      "--html", str(tmp_path / "r.html")])

    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "no such stack file or module directory" in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_stack_graph_refuses_dot_with_another_format(stack_file: Path, runtime_root: Path) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(runtime_root), "stack", "graph", str(stack_file),
                                      "--dot", "--format", "mermaid"])

    assert result.exit_code == 2 and "--dot is --format dot" in result.stderr


@pytest.mark.usefixtures("live_lock")
def test_a_report_of_every_record_or_one_module_shows_each_as_hyops_status_does(
    runtime_root: Path, stack_file: Path, tmp_path: Path
) -> None:
    every, one = tmp_path / "all.html", tmp_path / "vm.html"

    hyops(runtime_root, "report", "--all", "--html", str(every), "--no-reconcile")
    hyops(runtime_root, "report", str(stack_file.parent / "vm"), "--ref", "vocab/vm", "--html", str(one),
          "--no-reconcile")

    status = CliRunner().invoke(cli, ["--runtime-root", str(runtime_root), "status", "--all", "--json"])
    assert status.exit_code == 3  # a stale running record
    statuses = json.loads(status.stdout)
    cards = {a["data-module"]: a["data-record"] for tag, a in dom(every.read_text()) if tag == "article"}
    assert cards == {"vocab/busy": "running (stale)", "vocab/live": "running",
                     **{d["module_ref"]: d["status"] for d in statuses if d["status"] != "running"}}
    assert [(a["data-module"], a["data-status"]) for tag, a in dom(one.read_text()) if tag == "article"] == [
        ("vocab/vm", "error")]
