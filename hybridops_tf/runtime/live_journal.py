"""The live journal of a stack run in progress: the member updates appended to its report's
document (store/ports.Documents), on the local store `stacks/<stack>/live.jsonl` beside the
report (store/localdocs.py).

A run writes its report whole when it starts and when it ends (stack/report.py); in between,
each member's start and end is one line appended, so an update costs the same at 500 members
as at 5 (a report rewritten whole costs its size on each of a run's 2N updates). A reader folds
the lines into the report (`fold_lines`) while the report is unfinished; a line a killed runner
left half written is ignored, and so are lines of another run (lines the report's run_id does
not name: a run killed between its report and dropping the old lines). The lines are not
flushed to disk one by one: a runner that dies leaves them in the page cache; only a machine
that loses power can lose one, after which the member records (written durably) still say
what happened. A store outside the root keeps the same lines, where every runner's reader
folds them into the store's copy of the report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hybridops_tf.store.documents import LINES_FILE


def journal_path(report_path: Path) -> Path:
    """The local lines file of the report at `report_path` (store/documents.lines_path)."""
    return report_path.with_name(LINES_FILE)


def line_of(run: str | None, name: str, status: str, run_id: str | None, error: str | None) -> str:
    """One member's update as a journal line (no newline): the stack run, the member, its status."""
    return json.dumps({"run": run, "name": name, "status": status, "run_id": run_id, "error": error})


def fold(doc: dict[str, Any], report_path: Path) -> dict[str, Any]:
    """The report `doc` with its unfinished run's journaled updates applied, in order."""
    if doc.get("finished_at") or not isinstance(doc.get("members"), list):
        return doc
    try:
        text = journal_path(report_path).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return doc
    except OSError:
        return doc  # unreadable: the report as last written whole, and the records, still say it
    return fold_lines(doc, text.splitlines())


def fold_lines(doc: dict[str, Any], lines: Iterable[str]) -> dict[str, Any]:
    """The report `doc` with the updates of `lines` applied, in order: only an unfinished
    report's, only its run's, a half-written line skipped."""
    if doc.get("finished_at") or not isinstance(doc.get("members"), list):
        return doc
    index = {m.get("name"): i for i, m in enumerate(doc["members"]) if isinstance(m, dict)}
    for line in lines:
        try:
            update = json.loads(line)
        except ValueError:
            continue  # a line a killed runner left half written
        if not isinstance(update, dict) or update.get("run") != doc.get("run_id") or update.get("name") not in index:
            continue
        entry = dict(doc["members"][index[update["name"]]])
        entry["status"] = update.get("status")
        entry.pop("blocked_by", None)
        for key in ("run_id", "error"):
            if update.get(key) is None:
                entry.pop(key, None)
            else:
                entry[key] = update[key]
        doc["members"][index[update["name"]]] = entry
    return doc
