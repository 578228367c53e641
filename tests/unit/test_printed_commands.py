"""Every hyops command that hyops prints is built by record/advice.py's `Commands`: one builder,
so each printed command carries the global options typed (`--runtime-root`, `--store`,
`--engine`) and quotes its paths. A `next:` line spelled by hand once dropped a typed
`--runtime-root` and an unquoted stack file with a space broke the pasted command.

The package's source is read: a string literal that spells `hyops COMMAND` anywhere but in
advice.py fails, except where the words are not a command to paste: docstrings (the help text
and its examples), a Click option's `help=`, and the headings listed in HEADINGS."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

from hybridops_tf.record.advice import Commands, Where

PACKAGE = Path(__file__).resolve().parents[2] / "hybridops_tf"
BUILDER = "record/advice.py"
# The simulated cloud's provider is a program of its own that imports only itself (the layering
# test): what it names are `hyops sim` commands, which act on no record, store or stack.
OWN_PROGRAM = "sim/"
COMMAND = re.compile(r"(?:^|[`\s(])hyops (--|apply|destroy|plan|init|status|outputs|reconcile|stack|store|sim|"
                     r"report|version|completion)\b")
# Titles of a Markdown section or a JUnit suite: they name a command run, they advise none.
HEADINGS = {
    ("cli/markdown.py", "### hyops status"),
    ("cli/markdown.py", "### hyops reconcile"),
    ("cli/markdown.py", "hyops stack status"),
    ("cli/stack_show.py", "hyops stack status"),
    ("cli/stack_cmds.py", "hyops stack "),
    ("stack/junit.py", "hyops stack "),
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _help_texts(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "help":
            found.update(id(n) for n in ast.walk(node.value) if isinstance(n, ast.Constant))
    return found


def _rendered(node: ast.AST) -> str | None:
    """An f-string or a list of words as it prints, each value that names a hyops prefix (`{hyops}`,
    `{prefix}`, `{self.hyops}`) shown as `hyops`, any other as `X`; None for other nodes."""
    def word(part: ast.AST) -> str:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return part.value
        inner = part.value if isinstance(part, ast.FormattedValue) else part
        return "hyops" if re.search(r"hyops|prefix", ast.unparse(inner)) else "X"

    parts: list[ast.expr] = []
    if isinstance(node, ast.JoinedStr):
        parts = node.values
    elif isinstance(node, ast.List | ast.Tuple):
        parts = node.elts
    if any(isinstance(p, ast.Constant) and isinstance(p.value, str) and COMMAND.search(p.value) for p in parts):
        return None  # a literal part spells the command by itself: it is reported as that literal
    if isinstance(node, ast.JoinedStr):
        return "".join(word(part) for part in parts)
    return " ".join(word(part) for part in parts) if parts else None


def spelled(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string literal of `source` that spells a hyops command and is not a
    docstring or a `help=` text; an f-string or a list of words counts as it prints, so a
    command built from a prefix variable (`f"{hyops} stack apply"`) is seen too."""
    tree = ast.parse(source)
    exempt = _docstrings(tree) | _help_texts(tree)
    found = set()
    for node in ast.walk(tree):
        if id(node) in exempt:
            continue
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else _rendered(node)
        if text is not None and COMMAND.search(text):
            found.add((node.lineno, text))
    return sorted(found)


def hand_built_commands() -> list[str]:
    """`file:line: text` of every string literal spelling a hyops command outside the builder."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel != BUILDER and not rel.startswith(OWN_PROGRAM):
            out += [f"{rel}:{line}: {text[:100]!r}" for line, text in spelled(path.read_text(encoding="utf-8"))
                    if (rel, text) not in HEADINGS]
    return out


def test_no_hyops_command_is_spelled_outside_the_one_builder() -> None:
    assert hand_built_commands() == []


def test_the_scan_sees_a_command_spelled_by_hand() -> None:
    """The scan itself: an f-string's literal part and a plain string count; a docstring and a
    Click option's help do not."""
    source = ('"""Run `hyops stack apply X`."""\n'
              'def f(s):\n    return f"next: `hyops stack apply {s} --resume`"\n'
              'G = "then hyops reconcile --stack x"\n'
              'H = option("--x", help="as `hyops status --all` shows")\n')
    assert spelled(source) == [(3, "next: `hyops stack apply "), (4, "then hyops reconcile --stack x")]


def test_the_scan_sees_a_command_built_from_a_prefix_variable() -> None:
    """A command whose `hyops` is a variable (the global options typed) is as hand-built."""
    source = ('def f(hyops, s):\n    return f"{hyops} stack cancel {s}"\n'
              'def g(self, s):\n    return [self.hyops, "reconcile", s]\n'
              'def h(name, s):\n    return f"{name} apply {s}"\n')
    assert spelled(source) == [(2, "hyops stack cancel X"), (4, "hyops reconcile X")]


def test_stack_commands_carry_the_global_options_and_quote_the_stack_file() -> None:
    cmd = Commands(hyops="hyops --runtime-root /r --store postgresql://ci@db/hyops")
    stack_file = "infra/my stacks/prod.yml"
    for printed in (cmd.stack_resume(stack_file), cmd.stack_destroy(stack_file), cmd.stack_status(stack_file),
                    cmd.reconcile_stack(stack_file),
                    cmd.stack_apply(Where("prod/vm", "vm", stack_file=stack_file))):
        words = shlex.split(printed)
        assert words[:5] == ["hyops", "--runtime-root", "/r", "--store", "postgresql://ci@db/hyops"]
        assert stack_file in words
    assert shlex.split(cmd.status_all())[-2:] == ["status", "--all"]
