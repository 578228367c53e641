"""The CI recipes of examples/ci/ read as their CI systems read them: the files, the shell
scripts of their steps (GitHub `run:`, GitLab `before_script`/`script`/`after_script`) and
the `hyops` command lines in them, split as the shell would split them. Shared by the unit
test that parses every line with the real CLI (tests/unit/test_ci_examples.py) and the
integration tests that run the recipes (tests/integration/test_ci_recipes_run.py,
test_ci_queue_recipes_run.py)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
GITHUB = REPO / "examples" / "ci" / "github-actions.yml"
GITLAB = REPO / "examples" / "ci" / "gitlab-ci.yml"
GITHUB_QUEUE = REPO / "examples" / "ci" / "github-actions-queue.yml"  # a stack over many runners
GITLAB_QUEUE = REPO / "examples" / "ci" / "gitlab-ci-queue.yml"
GITHUB_RECIPES = (GITHUB, GITHUB_QUEUE)
GITLAB_RECIPES = (GITLAB, GITLAB_QUEUE)
CI_DOC = REPO / "docs" / "ci.md"

PLACEHOLDER = "placeholder"
SHELL_VARIABLE = re.compile(r"\$\{\w+\}|\$\w+")
CONTROL = {";", "&&", "||", "|", "&", "(", ")", "{", "}"}
REDIRECTS = (">", ">>", "<", ">&", "<&", "&>", ">|", "&>>")
ASSIGNMENT = re.compile(r"^\w+=")  # `NAME=value cmd ...`
LEADING_WORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "time", "exec"}


# --- finding the command lines ---------------------------------------------------------------


def logical_lines(script: str) -> list[str]:
    """Script lines with backslash-newline continuations joined, as the shell reads them."""
    return script.replace("\\\n", " ").splitlines()


def simple_commands(line: str) -> Iterator[list[str]]:
    """The simple commands of one shell line, each as its words without redirections.

    `if [ -z "$S" ]; then hyops plan "$M" >> "$OUT"; fi` gives `[ -z placeholder ]`,
    `hyops plan placeholder` and `fi`. Shell variables become PLACEHOLDER."""
    lexer = shlex.shlex(SHELL_VARIABLE.sub(PLACEHOLDER, line), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words: list[str] = []
    redirect_target = False
    for token in lexer:
        if token in CONTROL:
            if words:
                yield words
            words, redirect_target = [], False
        elif redirect_target:
            redirect_target = False
        elif token.startswith(REDIRECTS):
            redirect_target = True
        elif not words and (token in LEADING_WORDS or ASSIGNMENT.match(token)):
            continue
        else:
            words.append(token)
    if words:
        yield words


def hyops_commands(script: str) -> list[list[str]]:
    """Every `hyops` command in a shell script, as argv without the program name."""
    found = []
    for line in logical_lines(script):
        for words in simple_commands(line):
            if words[0] == "hyops" or words[0].endswith("/hyops"):
                found.append(words[1:])
    return found


def github_scripts(workflow: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(job name, run script) for every `run:` step."""
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            if "run" in step:
                yield job_name, step["run"]


def gitlab_scripts(pipeline: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(job name, script item) for every before_script/script/after_script entry."""
    for job_name, job in pipeline.items():
        if not isinstance(job, dict):
            continue
        for key in ("before_script", "script", "after_script"):
            items = job.get(key, [])
            for item in [items] if isinstance(items, str) else items:
                yield job_name, item


def doc_shell_blocks(text: str) -> Iterator[tuple[str, str]]:
    """("docs/ci.md", block) for every ```sh block of a Markdown page."""
    for block in re.findall(r"^```(?:sh|bash|shell)\n(.*?)^```", text, re.M | re.S):
        yield "docs/ci.md", block


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def recipe_commands() -> list[tuple[str, list[str]]]:
    """(where, argv) for every hyops command in the recipes and in docs/ci.md."""
    sources = [(f"{path.name}:{job}", s) for path in GITHUB_RECIPES for job, s in github_scripts(load(path))]
    sources += [(f"{path.name}:{job}", s) for path in GITLAB_RECIPES for job, s in gitlab_scripts(load(path))]
    if CI_DOC.exists():
        sources += list(doc_shell_blocks(CI_DOC.read_text(encoding="utf-8")))
    return [(where, argv) for where, script in sources for argv in hyops_commands(script)]
