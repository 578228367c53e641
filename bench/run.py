"""`make bench`: run every bench/bench_*.py and print each result as a table.

A bench module exposes `TITLE: str` and `run() -> list[dict[str, object]]`; each dict is a
row, the first row's keys are the columns. `run()` may instead return {subtitle: rows}, one
table per figure. `KIND` says what is measured: "micro" (default: a stand-in engine or no
engine at all) or "real engine" (the real engine and the sim provider); every title is
prefixed with it. A bench with both ("micro + real engine") says which row is which in a
`kind` column. Targets live here, never in timed tests.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def table(rows: list[dict[str, object]]) -> str:
    if not rows:
        return "(no rows)"
    cols = list(rows[0])
    cells = [[str(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) + " |" for row in cells]
    return "\n".join([line, rule, *body])


def print_result(result: list[dict[str, object]] | dict[str, list[dict[str, object]]]) -> None:
    if isinstance(result, dict):
        for subtitle, rows in result.items():
            print(f"\n### {subtitle}\n", flush=True)
            print(table(rows), flush=True)
    else:
        print(table(result), flush=True)


def main(names: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    for path in sorted(HERE.glob("bench_*.py")):
        if names and path.stem not in names and path.stem.removeprefix("bench_") not in names:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while it executes
        spec.loader.exec_module(module)
        kind = getattr(module, "KIND", "micro")
        print(f"\n## [{kind}] {module.TITLE}\n", flush=True)
        print_result(module.run())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
