"""`make mutation` (and the second half of `make mutants`): mutation testing of the rule modules by a tool.

scripts/mutants.py breaks each guarded rule by hand, one chosen slip each, against the tests
(often real-engine ones) named as its guards. This script asks a tool instead: mutmut makes
every small slip it knows (a flipped comparison, `and` for `or`, a dropped argument, a
changed constant or string, None for a value) in every function of each module that holds
rules (MODULES), and runs that module's fast unit tests against each one. A mutant that
every test survives is a slip no test notices: either a new unit test where that rule alone
decides kills it, or it is listed in scripts/mutation-survivors.toml with one line on why it
is equivalent or harmless (CONTRIBUTING.md: Mutation testing).

    .venv/bin/python scripts/mutation.py                      # every module of MODULES
    .venv/bin/python scripts/mutation.py -k judge             # the modules whose path contains "judge"
    .venv/bin/python scripts/mutation.py -k judge --pending   # also print a TOML stub per open survivor
    .venv/bin/python scripts/mutation.py --write-docs         # and rewrite docs/reliability.md's section

Each module runs in its own scratch copy of the repository (the package, the tests and
pyproject.toml with a [tool.mutmut] section naming only that module and only its test
files), in one process, niced: a module is seconds to a few minutes. A survivor is named by
its function and the line it changed (before -> after), never by mutmut's running number or a
line number, so the accepted list survives edits elsewhere in the file. The script prints a
table (module, mutants, killed, accepted, open, score), each open survivor with its diff, and
exits 1 if any is open. The score is killed / mutants.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SURVIVORS = REPO / "scripts" / "mutation-survivors.toml"
DOC = REPO / "docs" / "reliability.md"
DOC_START = "<!-- mutation: written by scripts/mutation.py --write-docs -->"
DOC_END = "<!-- mutation: end -->"
COPIED = ("hybridops_tf", "tests")
IGNORED = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".terraform", "*.tfstate*", ".hyops")

# Each rule module and the fast unit tests that name it (never the fuzz tests: a mutant is
# judged by the same tests every run). Order: the order of issue 56's list.
_U = "tests/unit/"
_COMPARE_TESTS = tuple(_U + t for t in (
    "test_reconcile_compare.py", "test_another_writer_rules.py", "test_identity.py", "test_lookup_rules.py",
    "test_lost_from_state.py", "test_reconcile_advice.py", "test_reconcile_members.py", "test_actions.py",
    "test_completed_deletes.py", "test_compare_findings.py", "test_actions_not_started.py"))
# inputs/sources.py reads one source, inputs/values.py merges them: one set of tests judges both
_INPUT_TESTS: tuple[str, ...] = tuple(_U + t for t in (
    "test_inputs.py", "test_input_types.py", "test_inputs_digest.py", "test_var_file_transport.py",
    "test_would_apply.py", "test_one_resolution.py", "test_input_values_rules.py", "test_inputs_in_any_locale.py",
    *(f"test_numbers.py::test_{n}" for n in (
        # the numbers-as-text tests that are not hypothesis searches (a mutant is judged by the same tests)
        "a_redacted_outputs_line_keeps_the_other_outputs_numbers",
        "the_issues_numbers_reach_the_var_file_as_written",
        "the_digest_sees_the_thirtieth_digit", "a_set_of_numbers_is_one_number_per_value",
        "constant_arithmetic_is_exact", "a_number_variables_text_is_read_as_the_engine_reads_it",
        "var_text_the_engine_refuses_for_a_number_is_refused_before_anything_runs",
        "an_infinite_yaml_number_is_refused_naming_the_file", "old_rerun_files_read_as_before",
        "json_refuses_what_the_engines_json_refuses", "a_quotient_decimal_cannot_hold_is_the_engines"))))

MODULES: dict[str, tuple[str, ...]] = {
    "hybridops_tf/reconcile/rules.py": tuple(_U + t for t in (
        "test_reconcile_rules.py", "test_another_writer_rules.py", "test_completed_deletes.py",
        "test_lost_from_state.py", "test_reconcile_advice.py", "test_actions.py", "test_reconcile_settles.py",
        "test_actions_not_started.py", "test_reconcile_rules_alone.py")),
    "hybridops_tf/reconcile/compare.py": _COMPARE_TESTS,
    "hybridops_tf/reconcile/lost.py": (*_COMPARE_TESTS, _U + "test_outside_seen.py", _U + "test_gate.py"),
    "hybridops_tf/reconcile/lookup/judge.py": (_U + "test_lookup_rules.py", _U + "test_lookup_judge.py"),
    "hybridops_tf/record/transitions.py": tuple(_U + t for t in (
        "test_settle.py", "test_settle_rules.py", "test_config_digest.py", "test_designed_for.py",
        "test_record_transitions.py")),
    "hybridops_tf/record/advice.py": (*_COMPARE_TESTS, _U + "test_reconcile_commands.py",
                                      _U + "test_advice_commands.py"),
    "hybridops_tf/operation/run_inputs.py": tuple(_U + t for t in (
        "test_inputs_digest.py", "test_one_resolution.py", "test_tofu_files.py", "test_run_inputs.py",
        "test_inputs_in_any_locale.py")),
    "hybridops_tf/inputs/sources.py": _INPUT_TESTS,
    "hybridops_tf/inputs/values.py": _INPUT_TESTS,
    "hybridops_tf/record/action_settle.py": (_U + "test_actions.py", _U + "test_action_rows.py"),
    "hybridops_tf/record/actions.py": (_U + "test_actions.py", _U + "test_action_rows.py"),
    "hybridops_tf/record/gate.py": (_U + "test_gate.py", _U + "test_completed_deletes.py", _U + "test_settle.py",
                                    _U + "test_settle_rules.py"),
}

# Left out of every run, as too slow to run once per mutant: the CLI in a subprocess (about the
# CLI, not the rules), and reconcile's generator (6,000 seeded cases, ~8 s a run under mutmut;
# a mutant only it kills is a rule without its own fixture, which is what this run looks for).
DESELECTED = ("tests/unit/test_reconcile_advice.py::"
              "test_the_cli_reports_a_live_engine_and_write_leaves_the_record_untouched",
              "tests/unit/test_reconcile_rules.py::test_no_random_evidence_ever_settles_ok_destroyed_or_absent_without_proof")

# mutmut's exit statuses (mutmut/stats.py) counted as caught
CAUGHT = {"killed", "timeout", "segfault", "caught by type check"}


@dataclass
class Survivor:
    module: str
    function: str
    old: str
    new: str
    name: str  # mutmut's name, for `mutmut show` in a kept scratch copy; not stable
    diff: str
    status: str  # mutmut's: survived, or no tests (no mapped test reaches the function)

    def key(self) -> tuple[str, str, str, str]:
        return (self.module, self.function, self.old, self.new)


@dataclass
class ModuleResult:
    module: str
    mutants: int = 0
    killed: int = 0
    accepted: int = 0
    open: list[Survivor] = field(default_factory=list)
    matched: set[tuple[str, str, str, str]] = field(default_factory=set)
    prose: int = 0  # of accepted: by the prose-wording category (PROSE), not an entry
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return self.killed / self.mutants if self.mutants else 0.0


def load_accepted(path: Path = SURVIVORS) -> dict[tuple[str, str, str, str], str]:
    """The accepted survivors: (module, function, old, new) -> why."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return {(s["module"], s["function"], s["old"], s["new"]): s["why"] for s in data.get("survivor", [])}


def _function_of(mutant_name: str) -> str:
    """`pkg.mod.x_judge__mutmut_3` -> `judge`; `pkg.mod.xǁCǁm__mutmut_1` -> `C.m`."""
    tail = mutant_name.rsplit(".", 1)[-1]
    tail = re.sub(r"__mutmut_\d+$", "", tail)
    if tail.startswith("xǁ"):
        return tail[2:].replace("ǁ", ".", 1)
    return tail[2:] if tail.startswith("x_") else tail


def _changed(diff: str) -> tuple[str, str]:
    """The changed lines of a unified diff, stripped and joined: (before, after)."""
    old, new = [], []
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            old.append(line[1:].strip())
        elif line.startswith("+"):
            new.append(line[1:].strip())
    return " / ".join(old), " / ".join(new)


# The one category of survivor accepted without an entry of its own: the wording of a prose
# fragment. mutmut's string operator wraps a literal in "XX" or changes its case; where the
# literal is a plain (not f-, b- or r-) one-line string of three or more words with nothing of
# code in it (no backtick, option dash, underscore, =, braces, backslash, slash, star or $) and is used as a
# value (never compared, tested for membership, indexed, used as a key or as the object or
# argument of a method), it can only be part of a sentence a person reads: a finding's detail or
# an alternative's `when`. No test holds the wording of a sentence (CONTRIBUTING.md: never assert
# on wrapped text), so such a survivor is counted accepted with this reason. A literal with a
# command, an option, a key, a kind or a status in it is never of this category.
PROSE = "prose wording: only the wording of a plain sentence fragment (scripts/mutation.py: prose_wording)"
_CODE_MARKS = ("`", "--", "_", "=", "{", "}", "\\", "/", "*", "$")
_USED_BEFORE = re.compile(r"(==|!=|<=|>=|<|>|\bin|\bis|\bnot|\[|\.\w+\()\s*$")
_USED_AFTER = re.compile(r"^\s*(==|!=|<=|>=|<|>|in\b|is\b|not\b|:|\]|\.)")


def _literals(line: str) -> list[tuple[str, str, int, int]] | None:
    """(prefix, text, start, end) of each one-line string literal of a source line; None where
    the line holds a triple-quoted or unterminated one (never this category's)."""
    found, i = [], 0
    while i < len(line):
        quote = line[i]
        if quote == "#":
            break
        if quote not in "\"'":
            i += 1
            continue
        if line.startswith(quote * 3, i):
            return None
        start = i
        while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
            start -= 1
        end = i + 1
        while end < len(line) and line[end] != quote:
            end += 2 if line[end] == "\\" else 1
        if end >= len(line):
            return None
        found.append((line[start:i], line[i + 1:end], start, end + 1))
        i = end + 1
    return found


def prose_wording(old: str, new: str) -> bool:
    """Whether a survivor (its changed line, before -> after) only rewords a prose fragment:
    mutmut's "XX" or case change of one plain literal of three or more words, with nothing of
    code in it, used as a value (see PROSE above)."""
    before, after = _literals(old), _literals(new)
    if not before or after is None or len(before) != len(after):
        return False
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b[:2] != a[:2]]
    if len(changed) != 1:
        return False
    (prefix, text, start, end), (prefix_now, text_now, start_now, end_now) = changed[0]
    if prefix or prefix_now or old[:start] != new[:start_now] or old[end:] != new[end_now:]:
        return False
    if text_now not in ("XX" + text + "XX", text.upper(), text.lower()):
        return False
    if len(text.split()) < 3 or any(mark in text for mark in _CODE_MARKS):
        return False
    return not _USED_BEFORE.search(old[:start]) and not _USED_AFTER.search(old[end:])


def _scratch(module: str, tests: tuple[str, ...], into: Path) -> None:
    for name in COPIED:
        shutil.copytree(REPO / name, into / name, ignore=IGNORED)
    config = "\n".join([
        "",
        "[tool.mutmut]",
        'source_paths = ["hybridops_tf"]',
        f"only_mutate = {json.dumps([module])}",
        # one process, no xdist, no cache: the scratch copy is thrown away
        "pytest_add_cli_args = " + json.dumps(["-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                                                *(f"--deselect={t}" for t in DESELECTED)]),
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}",
        "use_git_change_detection = false",
        # a mutant that loops is stopped after 6x its tests' measured time (+2 s) rather than
        # mutmut's 15x: such mutants are counted caught either way, and the long wait is what
        # made a run of reconcile's rules slow
        "timeout_multiplier = 6.0",
        "timeout_constant = 2.0",
        "",
    ])
    (into / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text() + config)


def _results(scratch: Path, module: str) -> tuple[dict[str, str], dict[str, str]]:
    """mutmut's status of each mutant of `module`, and the diff of each not caught."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    meta = json.loads((scratch / "mutants" / f"{module}.meta").read_text())
    status = {name: status_by_exit_code[code] for name, code in meta["exit_code_by_key"].items()}
    diffs: dict[str, str] = {}
    here = Path.cwd()
    os.chdir(scratch)
    reset_config()
    try:
        for name, st in status.items():
            if st not in CAUGHT:
                diffs[name] = get_diff_for_mutant(name, path=module)
    finally:
        os.chdir(here)
    return status, diffs


def run_module(module: str, tests: tuple[str, ...], accepted: dict[tuple[str, str, str, str], str],
               keep: bool, log: Path) -> ModuleResult:
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="hyops-mutation-"))
    try:
        _scratch(module, tests, scratch)
        mutmut = Path(sys.executable).with_name("mutmut")
        with log.open("w") as out:
            done = subprocess.run(["nice", "-n", "10", str(mutmut), "run", "--max-children", "1"], cwd=scratch,
                                  stdout=out, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise SystemExit(f"mutation: mutmut failed on {module} (exit {done.returncode}); its output: {log}")
        status, diffs = _results(scratch, module)
    finally:
        if keep:
            print(f"  kept the scratch copy of {module}: {scratch} (`mutmut show NAME` there)")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    result = ModuleResult(module, mutants=len(status))
    result.killed = sum(st in CAUGHT for st in status.values())
    for name, diff in sorted(diffs.items()):
        old, new = _changed(diff)
        survivor = Survivor(module, _function_of(name), old, new, name, diff, status[name])
        if survivor.key() in accepted:
            result.accepted += 1
            result.matched.add(survivor.key())
        elif prose_wording(old, new):
            result.accepted += 1
            result.prose += 1
        else:
            result.open.append(survivor)
    result.seconds = time.monotonic() - started
    return result


def _toml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a TOML basic string


def pending_stub(s: Survivor) -> str:
    return "\n".join(["[[survivor]]", f"module = {_toml_str(s.module)}", f"function = {_toml_str(s.function)}",
                      f"old = {_toml_str(s.old)}", f"new = {_toml_str(s.new)}", 'why = "TODO"', ""])


def table(results: list[ModuleResult]) -> list[str]:
    rows = ["| module | mutants | killed | accepted | open | score |", "|---|---|---|---|---|---|"]
    for r in results:
        rows.append(f"| `{r.module}` | {r.mutants} | {r.killed} | {r.accepted} | {len(r.open)} | {r.score:.0%} |")
    return rows


def _rows_kept(text: str, run: set[str]) -> dict[str, str]:
    """The table rows of the modules this run did not measure, as the section last wrote them."""
    section = text.partition(DOC_START)[2].partition(DOC_END)[0]
    rows = {}
    for line in section.splitlines():
        found = re.match(r"\| `([^`]+)` \|", line)
        if found and found.group(1) in MODULES and found.group(1) not in run:
            rows[found.group(1)] = line
    return rows


def write_docs(results: list[ModuleResult], doc: Path = DOC) -> None:
    """Rewrite the mutation section of docs/reliability.md (kept there by scripts/reliability.py):
    the rows of the modules measured now, the others' rows as they were, in MODULES' order."""
    text = doc.read_text() if doc.exists() else ""
    rows = _rows_kept(text, {r.module for r in results})
    rows.update(zip((r.module for r in results), table(results)[2:], strict=True))
    measured = [rows[m] for m in MODULES if m in rows]
    unmeasured = [f"`{m}`" for m in MODULES if m not in rows]
    section = [DOC_START, "", "## Mutation score of the rule modules (mutmut)", "",
               f"Last written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by `scripts/mutation.py "
               "--write-docs` (`make mutation`; each row from the run that last measured its module): every mutant "
               "mutmut makes in each module, run against that module's unit tests (scripts/mutation.py: MODULES). "
               "**killed**: a test failed; **accepted**: a survivor listed with its reason in "
               "scripts/mutation-survivors.toml (equivalent or harmless), or a change of the wording of a plain prose "
               "fragment alone (scripts/mutation.py: prose_wording); **open**: neither, still to be killed by "
               "a test or accepted; **score**: killed / mutants.", "", *table([])[:2], *measured, ""]
    if unmeasured:
        section += [f"Not measured yet: {', '.join(unmeasured)}.", ""]
    section += ["The queue's take and cancel (`hybridops_tf/stack/queue/take.py`, `cancel.py`) are transactions on "
                "the queue's PostgreSQL connection: their rules are held by the integration tests and the queue area "
                "of `make mutants`' hand-written table (CONTRIBUTING.md: Mutation testing by a tool), not by this "
                "run.", ""]
    section += [DOC_END]
    if DOC_START in text:
        head, _, rest = text.partition(DOC_START)
        _, _, tail = rest.partition(DOC_END)
        text = head + "\n".join(section) + tail
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(section) + "\n"
    doc.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-k", dest="only", action="append", default=[],
                        help="only the modules whose path contains this (repeatable)")
    parser.add_argument("--pending", action="store_true", help="print a TOML stub for each open survivor")
    parser.add_argument("--keep", action="store_true", help="keep each scratch copy (mutmut show/browse there)")
    parser.add_argument("--write-docs", action="store_true", help="rewrite the section of docs/reliability.md")
    args = parser.parse_args(argv)
    modules = {m: t for m, t in MODULES.items() if not args.only or any(k in m for k in args.only)}
    if not modules:
        parser.error(f"no module matches {' or '.join(args.only)}; the modules: {', '.join(MODULES)}")
    accepted = load_accepted()
    logs = Path(tempfile.mkdtemp(prefix="hyops-mutation-logs-"))
    results = []
    for module, tests in modules.items():
        print(f"mutation: {module} against {len(tests)} test file(s) ...", flush=True)
        r = run_module(module, tests, accepted, args.keep, logs / (module.replace("/", "_") + ".log"))
        print(f"  {r.mutants} mutants, {r.killed} killed, {r.accepted} accepted ({r.prose} as prose wording), "
              f"{len(r.open)} open "
              f"({r.seconds:.0f} s)", flush=True)
        results.append(r)
    print()
    print("\n".join(table(results)))
    opened = [s for r in results for s in r.open]
    for s in opened:
        print(f"\nOPEN ({s.status}) {s.module}: {s.function}: {s.old!r} -> {s.new!r}\n{s.diff}")
    if args.pending:
        print("\n# stubs for scripts/mutation-survivors.toml (write each reason, or kill it with a test)\n")
        print("\n".join(pending_stub(s) for s in opened))
    matched = {s for r in results for s in r.matched}
    for key in sorted(k for k in accepted if k[0] in modules and k not in matched):
        print(f"\nSTALE accepted survivor (no such mutant survives now; drop it): {key[0]}: {key[1]}: {key[2]!r}")
    if args.write_docs:
        write_docs(results)
        print(f"\nwrote the mutation section of {DOC.relative_to(REPO)}")
    total = sum(len(r.open) for r in results)
    print(f"\nmutation: {sum(r.killed for r in results)} killed, {sum(r.accepted for r in results)} accepted, "
          f"{total} open of {sum(r.mutants for r in results)} mutants")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
