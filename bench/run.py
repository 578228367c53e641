"""`make bench`: run every bench/bench_*.py and print each result as a table.

A bench module exposes `TITLE: str` and `run() -> list[dict[str, object]]`; each dict is a
row, the first row's keys are the columns. `run()` may instead return {subtitle: rows}, one
table per figure. `KIND` says what is measured: "micro" (default: a stand-in engine or no
engine at all) or "real engine" (the real engine and the sim provider); every title is
prefixed with it. A bench with both ("micro + real engine") says which row is which in a
`kind` column. Targets live here, never in timed tests.

Which benches run: those named on the command line (`python bench/run.py targets stack`), else
those in HYOPS_BENCH_ONLY (comma- or space-separated, e.g. `HYOPS_BENCH_ONLY=targets make
bench`), else every one. A name is the file's stem with or without `bench_`; a name that
matches no bench is an error.
"""

from __future__ import annotations

import importlib.util
import os
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


def selected(names: list[str]) -> list[Path]:
    """The bench files to run: those `names` (else HYOPS_BENCH_ONLY) name, else all."""
    if not names:
        names = os.environ.get("HYOPS_BENCH_ONLY", "").replace(",", " ").split()
    paths = sorted(HERE.glob("bench_*.py"))
    wanted = {name.removeprefix("bench_").removesuffix(".py") for name in names}
    unknown = wanted - {path.stem.removeprefix("bench_") for path in paths}
    if unknown:
        known = ", ".join(path.stem.removeprefix("bench_") for path in paths)
        raise SystemExit(f"bench/run.py: no bench named {', '.join(sorted(unknown))} (benches: {known})")
    return [path for path in paths if not wanted or path.stem.removeprefix("bench_") in wanted]


def main(names: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    for path in selected(names):
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
