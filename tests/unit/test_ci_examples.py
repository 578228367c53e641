"""The CI recipes in examples/ci/ (and docs/ci.md's shell blocks) use hyops as it exists.

Every `hyops ...` command line in a `run:` (GitHub) or `script:` (GitLab) step is split as the
shell would split it and parsed by the real Click tree (`hybridops_tf.cli.main:cli`), without
running it: an unknown command or option, a missing option value or a bad choice fails here.
The workflow structure the docs promise is checked too: plan on a pull/merge request, apply on
the main branch, reconcile when the apply job failed, run folders kept always, the store URL
from a secret.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import click
import pytest
import yaml

from hybridops_tf.cli.main import cli
from tests.ci_recipes import (
    CI_DOC,
    GITHUB,
    GITHUB_QUEUE,
    GITHUB_RECIPES,
    GITLAB,
    GITLAB_QUEUE,
    GITLAB_RECIPES,
    PLACEHOLDER,
    REPO,
    doc_shell_blocks,
    github_scripts,
    gitlab_scripts,
    hyops_commands,
    load,
    logical_lines,
    recipe_commands,
    simple_commands,
)

# --- parsing them with the CLI ---------------------------------------------------------------


def leading_args(ctx: click.Context) -> list[str]:
    """The subcommand name a group's context holds apart (`protected_args` before Click 8.2)."""
    held = getattr(ctx, "_protected_args", None)
    return list(held if held is not None else ctx.protected_args)


def parse(argv: list[str]) -> click.Context:
    """Parse argv as `hyops` would, down to the leaf command, without invoking anything.

    Raises click.UsageError (NoSuchOption, BadParameter, ...) as the real CLI would exit 2."""
    ctx = cli.make_context("hyops", list(argv), resilient_parsing=False)
    command: click.Command = cli
    while isinstance(command, click.Group):
        rest = [*leading_args(ctx), *ctx.args]
        name, sub, rest = command.resolve_command(ctx, rest)
        assert sub is not None and name is not None, f"no command in {argv}"
        command = sub
        ctx = sub.make_context(name, rest, parent=ctx, resilient_parsing=False)
    return ctx


def command_path(ctx: click.Context) -> str:
    return ctx.command_path.removeprefix("hyops ").strip()


# --- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("where, argv", recipe_commands(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_every_hyops_line_in_the_recipes_parses_with_the_cli(where: str, argv: list[str]) -> None:
    try:
        parse(argv)
    except click.UsageError as err:
        pytest.fail(f"{where}: `hyops {shlex.join(argv)}` does not parse: {err.format_message()}")


def test_the_recipes_use_the_commands_the_docs_describe() -> None:
    used = {(where.split(":")[0], command_path(parse(argv))) for where, argv in recipe_commands()}
    for recipe in ("github-actions.yml", "gitlab-ci.yml"):
        commands = {path for where, path in used if where == recipe}
        assert {"plan", "apply", "status", "reconcile", "stack apply", "stack status"} <= commands


def test_plan_status_and_reconcile_lines_ask_for_markdown() -> None:
    for where, argv in recipe_commands():
        if where.startswith(("github", "gitlab")) and command_path(parse(argv)) in {
                "plan", "status", "stack status", "reconcile"}:
            assert "--format" in argv and argv[argv.index("--format") + 1] == "markdown", where


def test_the_check_rejects_an_unknown_option_and_command() -> None:
    with pytest.raises(click.NoSuchOption):
        parse(["plan", "modules/x", "--no-such-option"])
    with pytest.raises(click.UsageError):
        parse(["stack", "no-such-command", "stack.yml"])
    with pytest.raises(click.BadParameter):
        parse(["stack", "apply", "stack.yml", "--parallelism", "zero"])
    assert command_path(parse(["--engine", "tofu", "stack", "apply", "s.yml", "--resume"])) == "stack apply"


def test_the_extractor_reads_continuations_compound_lines_and_redirections() -> None:
    script = (
        'pip install hybridops-tf\n'
        'if [ -z "$STACK" ]; then hyops plan "$MODULE" --format markdown >> "$GITHUB_STEP_SUMMARY"; fi\n'
        'hyops stack apply "$STACK" \\\n  --junit out.xml  # a comment\n'
        'echo hyops apply x && .venv/bin/hyops status --all\n'
    )
    assert hyops_commands(script) == [
        ["plan", PLACEHOLDER, "--format", "markdown"],
        ["stack", "apply", PLACEHOLDER, "--junit", "out.xml"],
        ["status", "--all"],
    ]


# --- the workflow structure ------------------------------------------------------------------


def github_triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true


def upload_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]


def test_github_plans_pull_requests_and_applies_main() -> None:
    workflow = load(GITHUB)
    assert set(github_triggers(workflow)) == {"pull_request", "push"}
    jobs = workflow["jobs"]
    assert "pull_request" in jobs["plan"]["if"]
    assert "refs/heads/main" in jobs["apply"]["if"]
    plan_runs = [s["run"] for s in jobs["plan"]["steps"] if "run" in s]
    assert any(re.search(r'hyops plan .*>> "\$GITHUB_STEP_SUMMARY"', run) for run in plan_runs)


def test_github_reconciles_when_the_apply_job_failed() -> None:
    job = load(GITHUB)["jobs"]["reconcile"]
    needs = job["needs"] if isinstance(job["needs"], list) else [job["needs"]]
    assert "apply" in needs and "failure()" in job["if"]
    assert any("hyops reconcile" in s.get("run", "") for s in job["steps"])


def test_github_uploads_the_run_folders_always_from_every_job() -> None:
    for name, job in load(GITHUB)["jobs"].items():
        uploads = upload_steps(job)
        assert uploads, f"job {name} uploads no artifact"
        for step in uploads:
            assert step["if"] == "always()", name
            assert ".hyops/runs/" in step["with"]["path"], name
            assert step["with"]["include-hidden-files"] is True, f"{name}: .hyops is a hidden folder"


@pytest.mark.parametrize("path", GITHUB_RECIPES, ids=lambda p: p.name)
def test_github_takes_the_store_url_from_a_secret(path: Any) -> None:
    store = load(path)["env"]["HYOPS_STORE"]
    assert re.fullmatch(r"\$\{\{\s*secrets\.HYOPS_STORE\s*\}\}", store)


def gitlab_jobs(pipeline: dict[str, Any]) -> dict[str, dict[str, Any]]:
    reserved = {"workflow", "stages", "variables", "default", "include"}
    return {k: v for k, v in pipeline.items() if isinstance(v, dict) and k not in reserved
            and not k.startswith(".")}


def test_gitlab_plans_merge_requests_and_applies_the_default_branch() -> None:
    jobs = gitlab_jobs(load(GITLAB))
    assert [r["if"] for r in jobs["plan"]["rules"]] == ['$CI_PIPELINE_SOURCE == "merge_request_event"']
    assert [r["if"] for r in jobs["apply"]["rules"]] == ["$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"]


def test_gitlab_reconciles_when_the_apply_job_failed() -> None:
    job = gitlab_jobs(load(GITLAB))["reconcile"]
    assert job["needs"] == ["apply"]
    assert [r.get("when") for r in job["rules"]] == ["on_failure"]
    assert any(argv[:1] == ["reconcile"] for _, s in gitlab_scripts({"r": job})
               for argv in hyops_commands(s))


def test_gitlab_keeps_the_run_folders_always_from_every_job() -> None:
    for name, job in gitlab_jobs(load(GITLAB)).items():
        assert job["artifacts"]["when"] == "always", name
        assert ".hyops/runs/" in job["artifacts"]["paths"], name


@pytest.mark.parametrize("path", GITLAB_RECIPES, ids=lambda p: p.name)
def test_gitlab_takes_the_store_url_from_a_ci_variable(path: Any) -> None:
    pipeline = load(path)
    reference = re.fullmatch(r"\$\{?(\w+)\}?", pipeline["variables"]["HYOPS_STORE"])
    assert reference is not None
    # Another name: GitLab gives `X: $X` the literal text "$X" when X is undefined (an
    # unprotected branch), where a differently named undefined variable expands to "".
    assert reference.group(1) != "HYOPS_STORE"
    assert "postgresql://" not in yaml.safe_dump(pipeline)  # never a literal URL in the file


def test_the_queue_recipes_queue_once_then_n_workers_then_report_always() -> None:
    """docs/ci.md "A stack over many runners": the run id handed on, N identical workers, a
    last job that runs whatever the workers' outcome and writes the summary and the JUnit."""
    github = load(GITHUB_QUEUE)["jobs"]
    assert github["queue"]["outputs"]["run"].replace(" ", "") == "${{steps.queue.outputs.run}}"
    work = github["work"]
    assert work["needs"] == "queue" and work["strategy"]["fail-fast"] is False
    assert len(work["strategy"]["matrix"]["worker"]) > 1
    assert work["env"]["RUN"].replace(" ", "") == "${{needs.queue.outputs.run}}"
    assert github["report"]["needs"] == ["queue", "work"] and "always()" in github["report"]["if"]
    gitlab = gitlab_jobs(load(GITLAB_QUEUE))
    assert gitlab["queue"]["artifacts"]["reports"]["dotenv"] == "hyops-queue.env"
    assert gitlab["work"]["needs"] == ["queue"] and gitlab["work"]["parallel"] > 1
    assert gitlab["report"]["needs"] == ["queue", "work"]
    assert [r.get("when") for r in gitlab["report"]["rules"]] == ["always"]
    assert gitlab["report"]["artifacts"]["reports"]["junit"] == "hyops-junit.xml"
    for where, argv in recipe_commands():
        if "queue" in where.split(":")[0] and argv[:2] == ["stack", "work"]:
            assert {"--until-idle", "--run", "--name"} <= set(argv), where
        if "queue" in where.split(":")[0] and argv[:2] == ["stack", "status"]:
            assert "--junit" in argv, where


# --- installing hyops: what exists, never a name no index publishes --------------------------

README = REPO / "README.md"
# `hybridops-tf`, `hybridops_tf[postgres]`, `hybridops-tf==1.2.3`: a name a package index would
# have to publish (it is not published anywhere). `NAME[extras] @ URL` and paths are what exists.
BARE_NAME = re.compile(r"^hybridops[-_]tf(\[[^\]]*\])?\s*([<>=!~;].*)?$", re.I)
URL_IN_TEXT = re.compile(r"postgres(?:ql)?://[^\s/@'\"]*:[^\s/@'\"]*@")  # user:password@


def install_requirements(script: str) -> list[str]:
    """The requirements of every `pip install` / `pipx install` / `python -m pip install`."""
    found = []
    for line in logical_lines(script):
        for words in simple_commands(line):
            for start in range(len(words) - 1):
                if words[start] in ("pip", "pip3", "pipx") or words[start].endswith(("/pip", "/pip3")):
                    if words[start + 1] == "install":
                        found += [w for w in words[start + 2:] if not w.startswith("-")]
                    break
    return found


def expand(script: str, values: dict[str, Any]) -> str:
    """`$NAME` / `${NAME}` replaced by the value the file's own `env:`/`variables:` gives it
    (the install requirement is set once, at the top); other variables are left as they are."""
    def value(match: re.Match[str]) -> str:
        found = values.get(match.group(1) or match.group(2))
        return found if isinstance(found, str) else match.group(0)

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, script)


def recipe_scripts() -> list[tuple[str, str]]:
    sources = []
    for path in GITHUB_RECIPES:
        github = load(path)
        sources += [(f"{path.name}:{job}", expand(s, github["env"])) for job, s in github_scripts(github)]
    for path in GITLAB_RECIPES:
        gitlab = load(path)
        sources += [(f"{path.name}:{job}", expand(s, gitlab["variables"])) for job, s in gitlab_scripts(gitlab)]
    return sources + list(doc_shell_blocks(CI_DOC.read_text(encoding="utf-8")))


def test_the_install_check_tells_a_bare_name_from_what_exists() -> None:
    script = ('pip install hybridops-tf\npip install --quiet "hybridops-tf[postgres]==1.0"\n'
              'pip install "hybridops-tf[postgres] @ git+https://example.org/o/r@v1"\n'
              'python -m pip install ./dist/hybridops_tf-0.1.0-py3-none-any.whl && pipx install .\n')
    wanted = install_requirements(script)
    assert wanted == ["hybridops-tf", "hybridops-tf[postgres]==1.0",
                      "hybridops-tf[postgres] @ git+https://example.org/o/r@v1",
                      "./dist/hybridops_tf-0.1.0-py3-none-any.whl", "."]
    assert [bool(BARE_NAME.match(w)) for w in wanted] == [True, True, False, False, False]


def test_no_recipe_installs_hybridops_tf_by_its_bare_name() -> None:
    """hybridops-tf is not on PyPI: `pip install hybridops-tf` fails on every runner."""
    for where, script in recipe_scripts():
        for requirement in install_requirements(script):
            assert not BARE_NAME.match(requirement), (
                f"{where}: `pip install {requirement}` names a package no index publishes; "
                "install from the repository (NAME[postgres] @ git+https://...@TAG) or a wheel")


@pytest.mark.parametrize("github, gitlab", [(GITHUB, GITLAB), (GITHUB_QUEUE, GITLAB_QUEUE)],
                         ids=["recipes", "queue-recipes"])
def test_every_job_that_runs_hyops_installs_it_from_the_repository_with_postgres(github: Any, gitlab: Any) -> None:
    """The store URL comes from a secret: every job needs the [postgres] extra."""
    pipeline, workflow = load(gitlab), load(github)
    jobs: dict[str, list[str]] = {}
    for name, job in workflow["jobs"].items():
        jobs[f"github:{name}"] = [expand(s["run"], workflow["env"]) for s in job["steps"] if "run" in s]
    for name, job in gitlab_jobs(pipeline).items():
        template = pipeline.get(job.get("extends", ""), {})
        jobs[f"gitlab:{name}"] = [expand(s, pipeline["variables"])
                                  for _, s in gitlab_scripts({"t": template, "j": job})]
    for name, scripts in jobs.items():
        if not any(hyops_commands(s) for s in scripts):
            continue
        wanted = [r for s in scripts for r in install_requirements(s) if "hybridops" in r]
        assert wanted, f"{name} runs hyops without installing it"
        for requirement in wanted:
            assert re.fullmatch(r"hybridops-tf\[postgres\] @ git\+https://\S+@\S+", requirement), \
                f"{name}: {requirement}"


def test_the_recipes_say_how_to_point_the_install_at_your_copy() -> None:
    for path in (*GITHUB_RECIPES, *GITLAB_RECIPES, CI_DOC):
        raw = path.read_text(encoding="utf-8")
        assert "not published on PyPI" in " ".join(raw.split()), path.name


# --- the store's password: never in the URL --------------------------------------------------

def test_no_doc_or_recipe_puts_a_password_in_the_store_url() -> None:
    """With `backend "pg" {}` hyops refuses (exit 2) a store URL carrying a password."""
    for path in (*GITHUB_RECIPES, *GITLAB_RECIPES, CI_DOC, README, REPO / "docs" / "shared-store.md"):
        raw = path.read_text(encoding="utf-8")
        assert not URL_IN_TEXT.search(raw), f"{path.name}: {URL_IN_TEXT.search(raw).group(0)}"  # type: ignore[union-attr]
        if path != README:
            assert "PGPASSWORD" in raw and "PGPASSFILE" in raw, path.name


@pytest.mark.parametrize("path", GITHUB_RECIPES, ids=lambda p: p.name)
def test_github_takes_the_store_password_from_its_own_secret(path: Any) -> None:
    env = load(path)["env"]
    assert re.fullmatch(r"\$\{\{\s*secrets\.\w+\s*\}\}", env["PGPASSWORD"])
    assert env["PGPASSWORD"] != env["HYOPS_STORE"]


@pytest.mark.parametrize("path", GITLAB_RECIPES, ids=lambda p: p.name)
def test_gitlab_takes_the_store_password_from_a_ci_variable(path: Any) -> None:
    variables = load(path)["variables"]
    reference = re.fullmatch(r"\$\{?(\w+)\}?", variables["PGPASSWORD"])
    assert reference is not None and reference.group(1) not in ("PGPASSWORD", "HYOPS_STORE_URL")


# --- the README: installing outside `make` ---------------------------------------------------

def test_the_readme_says_how_to_install_hyops_like_any_python_cli() -> None:
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## Install\n(.*?)^## ", text, re.M | re.S)
    assert section is not None, "README has no `## Install` section"
    assert text.index("## Install") < text.index("## Commands"), "Install comes before Commands"
    body = " ".join(section.group(1).split())
    for needed in ("pipx install", "pip install", "git+https://", "[sim]", "[postgres]",
                   "python -m build", "pip wheel", "not published on PyPI", "pipx inject"):
        assert needed in body, f"README's Install section lacks {needed!r}"
