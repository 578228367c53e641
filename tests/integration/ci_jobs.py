"""Playing a CI recipe's pipeline as its CI system would (the harness of
tests/integration/test_ci_recipes_run.py and test_ci_queue_recipes_run.py).

Each recipe is read as its CI system reads it and its jobs are played in pipeline order
(`needs`/stages, `if:`/`rules:`). Every shell step runs as written (GitHub: `bash -e FILE`,
the default `run:` shell of a Linux runner; GitLab: one `set -eo pipefail` shell for
before_script + script, another for after_script), in a fresh checkout per job (jobs run on
different runners), with `hyops` first on PATH. What a runner would get from steps that only
prepare it (checking out, installing Python, OpenTofu and hyops) is given instead: the
checkout is a copy of this repository's modules/sim (every module with `backend "pg" {}`),
the engine is the bundled one (HYOPS_ENGINE), hyops is this venv's console script. Those
steps are skipped through explicit allow-lists (SETUP_ACTIONS, INSTALL_LINES): a step, a job
key or a condition this harness does not know fails the test loudly instead of being skipped.

Jobs share only what runners share: the PostgreSQL store (the suite's private cluster; the
URL without its password as the HYOPS_STORE secret/variable, the password as
HYOPS_STORE_PASSWORD) and the cloud (the sim root), plus what the CI system hands on: GitHub
job outputs (a step's $GITHUB_OUTPUT, `needs.JOB.outputs.X`), GitLab artifacts of the jobs
in `needs` and their dotenv reports. A matrix job (GitHub `strategy: matrix`, one axis) or a
`parallel: N` job (GitLab, CI_NODE_INDEX/CI_NODE_TOTAL) is played as its N instances AT ONCE,
each a separate process tree in its own checkout; `needs` on it waits for all of them, and it
fails when one does.

A `hyops` shim first on PATH logs every call (argv, cwd and exit code) and runs the real
console script, so each job's hyops calls can be asserted exactly.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.ci_recipes import github_scripts, gitlab_scripts, hyops_commands
from tests.integration.helpers import MODULE_COPY_IGNORE, SIM_MODULES
from tests.integration.hyops_cli import HYOPS
from tests.integration.shared_store import SharedStore
from tests.pgcluster import PgCluster
from tests.readers import code_spans

STEP_TIMEOUT_SECONDS = 240
PG_BACKEND = 'terraform {\n  backend "pg" {}\n}\n'
MEMBERS = ("network", "vm", "config", "health")

# Steps that prepare a runner, and what this test gives instead. Anything else that is not a
# shell step fails the test: a new kind of step must be looked at, not silently skipped.
SETUP_ACTIONS = {
    "actions/checkout": "a fresh copy of the repository per job",
    "actions/setup-python": "this venv's Python",
    "opentofu/setup-opentofu": "the bundled engine, as HYOPS_ENGINE",
}
ARTIFACT_ACTION = "actions/upload-artifact"  # not run: its paths are checked to exist
# Whole shell lines that install things (the runner's setup), given instead as above.
INSTALL_LINES = (
    re.compile(r'pip install (--quiet )?"\$HYOPS_PACKAGE"'),
    re.compile(r"curl --proto '=https' --tlsv1\.2 -fsSL https://get\.opentofu\.org/install-opentofu\.sh "
               r"-o install-opentofu\.sh"),
    re.compile(r"sh install-opentofu\.sh --install-method deb"),
)
INSTALLING = re.compile(r"(^|[\s;&|(])(pip3?|pipx|python3? -m pip|curl|wget|apt(-get)?|sudo|sh install-\S+)\s", re.M)
GITHUB_TOP_KEYS = {"name", "on", True, "permissions", "concurrency", "env", "jobs"}
GITHUB_JOB_KEYS = {"if", "needs", "runs-on", "environment", "steps", "outputs", "strategy", "env"}
GITHUB_STEP_KEYS = {"name", "id", "if", "run", "uses", "with"}
GITLAB_TOP_KEYS = {"workflow", "stages", "variables"}
GITLAB_JOB_KEYS = {"extends", "image", "stage", "rules", "needs", "resource_group", "environment", "parallel",
                   "before_script", "script", "after_script", "artifacts"}

# The `hyops` first on PATH: logs argv, cwd and exit code (one JSON line each) to
# $HYOPS_CALL_LOG, then runs the real console script with the same arguments and streams.
SHIM = """#!{python}
import json, os, subprocess, sys
rc = subprocess.call([{hyops!r}, *sys.argv[1:]])
with open(os.environ["HYOPS_CALL_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "rc": rc, "cwd": os.getcwd()}}) + "\\n")
sys.exit(rc)
"""


# --- the world a pipeline runs in ------------------------------------------------------------


@dataclass
class Project:
    """What the pipelines of one repository share: the store, its secrets and the cloud."""

    tmp: Path
    store: SharedStore
    cloud: Path
    engine: str
    bin_dir: Path
    faults: Path | None = None
    jobs_run: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def secrets(self) -> dict[str, str]:
        """The repository's secrets (GitHub) / protected CI/CD variables (GitLab)."""
        return {"HYOPS_STORE": self.store.url, "HYOPS_STORE_URL": self.store.url,
                "HYOPS_STORE_PASSWORD": self.store.cluster.env()["PGPASSWORD"]}

    def checkout(self, job: str) -> Path:
        """A fresh runner's checkout of the repository: modules/{network,vm,config,health},
        modules/stack.yml, every module's state in the store (`backend "pg" {}`)."""
        with self._lock:  # the instances of a matrix/parallel job check out at once
            self.jobs_run += 1
            number = self.jobs_run
        label = re.sub(r"[^\w.-]+", "-", job)  # `work (1)`, `work 1/3`: a folder name
        repo = self.tmp / f"runner-{number}-{label}" / "builds" / "repo"
        shutil.copytree(SIM_MODULES, repo / "modules", ignore=MODULE_COPY_IGNORE)
        for member in MEMBERS:
            (repo / "modules" / member / "backend.tf").write_text(PG_BACKEND)
        return repo

    def elsewhere(self, command: str) -> subprocess.CompletedProcess[str]:
        """Run a command a summary names as a person would: in a fresh checkout of their own,
        with the store's URL and password in their environment."""
        repo = self.checkout("person")
        env = {**self.runner_env(repo, repo.parent / "hyops-calls.jsonl"), **self.store.env()}
        return subprocess.run(shlex.split(command), cwd=repo, env=env, capture_output=True, text=True,
                              timeout=STEP_TIMEOUT_SECONDS, check=False)

    def runner_env(self, repo: Path, call_log: Path) -> dict[str, str]:
        """A runner's environment before the recipe's own: this machine's (scrubbed by the
        suite's autouse fixture), the engine, the sim cloud, hyops first on PATH."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("HYOPS_", "PG", "GITHUB_", "GITLAB_", "CI_"))}
        env.update({
            "PATH": f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HYOPS_ENGINE": self.engine,
            "HYOPS_SIM_ROOT": str(self.cloud),
            "HYOPS_CEILING_DIRECTORIES": str(repo.parent),  # never a .hyops above the checkout
            "HYOPS_CALL_LOG": str(call_log),
            "CI": "true",
        })
        if self.faults is not None:
            env["HYOPS_SIM_FAULTS"] = str(self.faults)
        return env


@dataclass
class Step:
    name: str
    rc: int | None  # None: not run (its condition was false)
    output: str = ""


@dataclass
class Job:
    name: str
    status: str  # success, failure, skipped
    repo: Path | None = None
    steps: list[Step] = field(default_factory=list)
    summary: str = ""  # GitHub: the job summary ($GITHUB_STEP_SUMMARY of every step)
    artifacts: list[str] = field(default_factory=list)  # the artifact paths that exist
    calls: list[dict[str, Any]] = field(default_factory=list)  # the hyops calls, in order
    outputs: dict[str, str] = field(default_factory=dict)  # GitHub: the job's `outputs:`
    dotenv: dict[str, str] = field(default_factory=dict)  # GitLab: its `artifacts: reports: dotenv`
    instances: list[Job] = field(default_factory=list)  # a matrix/parallel job: each one played

    def hyops_calls(self) -> list[tuple[str, int]]:
        return [(shlex.join(c["argv"]), c["rc"]) for c in self.calls]

    def file(self, name: str) -> str:
        assert self.repo is not None and (self.repo / name).is_file(), f"{self.name}: no {name}\n{self.log()}"
        return (self.repo / name).read_text(encoding="utf-8")

    def log(self) -> str:
        return "\n".join(f"--- {s.name}: rc={s.rc}\n{s.output}" for s in self.steps)


Pipeline = dict[str, Job]


def run_shell(argv: list[str], script: str, repo: Path, env: dict[str, str]) -> tuple[int, str]:
    path = repo.parent / f"step-{len(list(repo.parent.glob('step-*.sh')))}.sh"
    path.write_text(script, encoding="utf-8")
    out = subprocess.run([*argv, str(path)], cwd=repo, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=STEP_TIMEOUT_SECONDS, check=False)
    return out.returncode, out.stdout


def read_calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def is_install(line: str) -> bool:
    return any(p.fullmatch(line.strip()) for p in INSTALL_LINES)


def install_only(script: str) -> bool:
    """True when every line is a known install line. A script mixing both, or installing in a
    way INSTALL_LINES does not know, fails the test (it is never run here)."""
    lines = [ln for ln in script.splitlines() if ln.strip()]
    installs = [is_install(ln) for ln in lines]
    assert all(installs) or not any(installs), f"a step both installs and runs:\n{script}"
    if not all(installs):
        assert not INSTALLING.search(script), f"an install this test does not know:\n{script}"
    return bool(lines) and all(installs)


# --- GitHub Actions --------------------------------------------------------------------------

_GH_TOKEN = re.compile(r"\s*(?:'((?:[^']|'')*)'|(==|!=|&&|\|\||!|\(|\))|([A-Za-z_][\w-]*(?:\.[\w-]+)*)(\(\))?)")
_GH_STATUS = ("always", "success", "failure", "cancelled")
_GH_STATUS_CALL = re.compile(r"\b(always|success|failure|cancelled)\(\)")


def github_expression(text: str, contexts: dict[str, dict[str, Any]], status: dict[str, bool]) -> Any:
    """Evaluate a GitHub expression: literals, env./github./secrets. lookups, ==, !=, !, &&,
    ||, parentheses and the status functions. Anything else fails the test."""
    text = text.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2].strip()
    out, pos = [], 0
    while pos < len(text):
        m = _GH_TOKEN.match(text, pos)
        assert m is not None, f"unsupported GitHub expression {text!r} at {text[pos:]!r}"
        literal, op, name, call = m.groups()
        if literal is not None:
            out.append(repr(literal.replace("''", "'")))
        elif op is not None:
            out.append({"&&": "and", "||": "or", "!": "not"}.get(op, op))
        elif call:
            assert name in _GH_STATUS, f"unsupported function {name}() in {text!r}"
            out.append(repr(status[name]))
        else:
            head, _, rest = name.partition(".")
            assert head in contexts and rest, f"unsupported name {name!r} in {text!r}"
            value = contexts[head].get(rest)
            out.append(repr("" if value is None else value))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return eval(" ".join(out), {"__builtins__": {}}, {})  # noqa: S307 (tokens checked above)


def github_condition(text: str | None, contexts: dict[str, dict[str, Any]], status: dict[str, bool]) -> bool:
    """A job's or step's `if:`; without a status function it means `success() && (...)`."""
    if text is None:
        return status["success"]
    if not _GH_STATUS_CALL.search(text):
        return status["success"] and bool(github_expression(text, contexts, status))
    return bool(github_expression(text, contexts, status))


def github_interpolate(value: Any, contexts: dict[str, dict[str, Any]]) -> str:
    def one(m: re.Match[str]) -> str:
        found = github_expression(m.group(1), contexts, {})
        return "" if found is None else str(found)
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def run_github(workflow: dict[str, Any], project: Project, *, event: str, ref: str,
               edits: dict[str, str] | None = None) -> Pipeline:
    """Play one workflow run: the jobs whose `if:` holds, in `needs` order, each step in turn;
    a matrix job's instances at once."""
    assert set(workflow) <= GITHUB_TOP_KEYS, set(workflow) - GITHUB_TOP_KEYS
    github = {"event_name": event, "ref": ref}
    contexts: dict[str, dict[str, Any]] = {"github": github, "secrets": project.secrets, "env": {}}
    top_env = {k: github_interpolate(v, contexts) for k, v in workflow["env"].items()}
    top_env.update(edits or {})  # the user's settings at the top of the file
    jobs: Pipeline = {}
    for name, spec in workflow["jobs"].items():
        assert set(spec) <= GITHUB_JOB_KEYS, f"job {name}: {set(spec) - GITHUB_JOB_KEYS}"
        needs = spec.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        needed = [jobs[n].status for n in needs]
        status = {"always": True, "cancelled": False, "success": all(s == "success" for s in needed),
                  "failure": any(s == "failure" for s in needed)}
        job_contexts = {**contexts, "needs": needs_context(jobs, needs)}
        if not github_condition(spec.get("if"), {**job_contexts, "env": top_env}, status):
            jobs[name] = Job(name, "skipped")
            continue
        matrix = github_matrix(name, spec)
        if matrix is None:
            jobs[name] = run_github_job(name, spec, project, job_contexts, top_env)
            continue
        with ThreadPoolExecutor(max_workers=len(matrix)) as pool:  # a runner each, at the same time
            futures = [pool.submit(run_github_job, f"{name} ({value})", spec, project,
                                   {**job_contexts, "matrix": {key: value}}, top_env) for key, value in matrix]
            instances = [f.result() for f in futures]
        failed = any(i.status == "failure" for i in instances)
        jobs[name] = Job(name, "failure" if failed else "success", instances=instances)
    return jobs


def needs_context(jobs: Pipeline, needs: list[str]) -> dict[str, Any]:
    """`needs.JOB.result` and `needs.JOB.outputs.NAME`, as the flat names the evaluator looks up."""
    found: dict[str, Any] = {}
    for name in needs:
        found[f"{name}.result"] = jobs[name].status
        found.update({f"{name}.outputs.{k}": v for k, v in jobs[name].outputs.items()})
    return found


def github_matrix(name: str, spec: dict[str, Any]) -> list[tuple[str, Any]] | None:
    """(key, value) per instance of a one-axis `strategy: matrix`, None without one."""
    strategy = spec.get("strategy")
    if strategy is None:
        return None
    assert set(strategy) <= {"matrix", "fail-fast"}, f"job {name}: strategy {set(strategy)}"
    assert strategy.get("fail-fast") is False, f"job {name}: fail-fast would cancel the other instances"
    (key, values), = strategy["matrix"].items()
    assert isinstance(values, list) and values, f"job {name}: matrix {key} is not a list"
    return [(key, v) for v in values]


def run_github_job(name: str, spec: dict[str, Any], project: Project,
                   contexts: dict[str, dict[str, Any]], env: dict[str, str]) -> Job:
    repo = project.checkout(name)
    call_log = repo.parent / "hyops-calls.jsonl"
    job = Job(name, "success", repo)
    env = {**env, **{k: github_interpolate(v, {**contexts, "env": env}) for k, v in spec.get("env", {}).items()}}
    steps: dict[str, Any] = {}  # `steps.ID.outputs.NAME`
    for index, step in enumerate(spec["steps"]):
        assert set(step) <= GITHUB_STEP_KEYS, f"{name} step {index}: {set(step) - GITHUB_STEP_KEYS}"
        title = step.get("name") or step.get("uses") or step["run"]
        failed = job.status == "failure"
        status = {"always": True, "cancelled": False, "success": not failed, "failure": failed}
        if not github_condition(step.get("if"), {**contexts, "env": env}, status):
            job.steps.append(Step(title, None))
            continue
        if "uses" in step:
            action = step["uses"].split("@")[0]
            if action == ARTIFACT_ACTION:
                paths = [p.strip() for p in str(step["with"]["path"]).splitlines() if p.strip()]
                job.artifacts += [p for p in paths if (repo / p).exists()]
            else:
                assert action in SETUP_ACTIONS, f"{name}: step `uses: {step['uses']}` is not known to this test"
            job.steps.append(Step(title, 0, f"(given: {SETUP_ACTIONS.get(action, 'checked')})"))
            continue
        if install_only(step["run"]):
            job.steps.append(Step(title, 0, "(given: hyops is installed)"))
            continue
        summary = repo.parent / f"step-summary-{index}.md"
        summary.touch()  # the runner gives each step its own, empty, summary and output files
        output_file = repo.parent / f"step-output-{index}.txt"
        output_file.touch()
        step_env = {**project.runner_env(repo, call_log), **env, "GITHUB_ACTIONS": "true",
                    "GITHUB_EVENT_NAME": contexts["github"]["event_name"],
                    "GITHUB_REF": contexts["github"]["ref"], "GITHUB_WORKSPACE": str(repo),
                    "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output_file)}
        rc, output = run_shell(["bash", "-e"], step["run"], repo, step_env)
        job.steps.append(Step(title, rc, output))
        job.summary += summary.read_text(encoding="utf-8")
        if "id" in step:
            steps.update({f"{step['id']}.outputs.{k}": v for k, v in key_values(output_file).items()})
        if rc != 0:
            job.status = "failure"
    job.outputs = {k: github_interpolate(v, {**contexts, "steps": steps}) for k, v in spec.get("outputs", {}).items()}
    job.calls = read_calls(call_log)
    return job


def key_values(path: Path) -> dict[str, str]:
    """`NAME=value` lines (a GitHub step's $GITHUB_OUTPUT, a GitLab dotenv report)."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    pairs = [line.split("=", 1) for line in lines if line.strip()]
    assert all(len(p) == 2 for p in pairs), f"{path.name}: not NAME=value lines:\n{lines}"
    return {k: v for k, v in pairs}


# --- GitLab CI/CD ----------------------------------------------------------------------------

_GL_TOKEN = re.compile(r'\s*(?:"([^"]*)"|\'([^\']*)\'|(==|!=|&&|\|\||\(|\))|\$\{?(\w+)\}?)')


def gitlab_rule(text: str, variables: dict[str, str]) -> bool:
    """A `rules: if:`: $VARS (undefined is null), quoted strings, ==, !=, &&, ||, parentheses."""
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _GL_TOKEN.match(text, pos)
        assert m is not None, f"unsupported GitLab rule {text!r} at {text[pos:]!r}"
        double, single, op, var = m.groups()
        if op is not None:
            out.append({"&&": "and", "||": "or"}.get(op, op))
        elif var is not None:
            out.append(repr(variables.get(var)))
        else:
            out.append(repr(double if double is not None else single))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return bool(eval(" ".join(out), {"__builtins__": {}}, {}))  # noqa: S307 (tokens checked above)


def gitlab_expand(value: Any, variables: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: variables.get(m.group(1) or m.group(2), ""), str(value))


def gitlab_when(rules: list[dict[str, Any]], variables: dict[str, str]) -> str | None:
    """The `when` of the first rule that matches, None when none does (the job is not added)."""
    for rule in rules:
        assert set(rule) <= {"if", "when"}, rule
        if "if" not in rule or gitlab_rule(rule["if"], variables):
            return rule.get("when", "on_success")
    return None


def script_items(items: Any) -> list[str]:
    return [items] if isinstance(items, str) else list(items or [])


def run_gitlab(pipeline: dict[str, Any], project: Project, *, source: str, branch: str | None,
               edits: dict[str, str] | None = None) -> Pipeline:
    """Play one pipeline: workflow rules, then the jobs stage by stage, each job's rules."""
    predefined = {"CI_PIPELINE_SOURCE": source, "CI_DEFAULT_BRANCH": "main", "GITLAB_CI": "true"}
    if branch is not None:  # a merge request pipeline has no CI_COMMIT_BRANCH
        predefined["CI_COMMIT_BRANCH"] = branch
    variables = {**project.secrets, **predefined}
    for key, value in pipeline["variables"].items():
        variables[key] = gitlab_expand(value, variables)
    variables.update(edits or {})
    assert gitlab_when(pipeline["workflow"]["rules"], variables) not in (None, "never"), "no pipeline"
    jobs: Pipeline = {}
    specs = {k: v for k, v in pipeline.items() if k not in GITLAB_TOP_KEYS and not k.startswith(".")}
    order = {stage: i for i, stage in enumerate(pipeline["stages"])}
    for name, spec in sorted(specs.items(), key=lambda kv: order[kv[1]["stage"]]):
        template = pipeline.get(spec.get("extends", ""), {})
        spec = {**template, **spec}
        assert set(spec) <= GITLAB_JOB_KEYS, f"job {name}: {set(spec) - GITLAB_JOB_KEYS}"
        when = gitlab_when(spec.get("rules", [{}]), variables)
        earlier = spec["needs"] if "needs" in spec else [
            n for n, j in jobs.items() if order[specs[n]["stage"]] < order[spec["stage"]]]
        ran = [jobs[n].status for n in earlier if jobs[n].status != "skipped"]
        go = {None: False, "never": False, "always": True,
              "on_success": all(s == "success" for s in ran),
              "on_failure": any(s == "failure" for s in ran)}[when]
        if not go:
            jobs[name] = Job(name, "skipped")
            continue
        before = [i for n in earlier for i in played(jobs[n])]
        count = spec.get("parallel")
        if count is None:
            jobs[name] = run_gitlab_job(name, spec, project, variables, before)
            continue
        assert isinstance(count, int) and count > 1, f"job {name}: parallel {count!r}"
        with ThreadPoolExecutor(max_workers=count) as pool:  # a runner each, at the same time
            futures = [pool.submit(run_gitlab_job, f"{name} {i}/{count}", spec, project,
                                   {**variables, "CI_NODE_INDEX": str(i), "CI_NODE_TOTAL": str(count)}, before)
                       for i in range(1, count + 1)]
            instances = [f.result() for f in futures]
        failed = any(i.status == "failure" for i in instances)
        jobs[name] = Job(name, "failure" if failed else "success", instances=instances)
    return jobs


def played(job: Job) -> list[Job]:
    """The jobs that ran: a parallel/matrix job's instances, or the job itself."""
    return job.instances or [job]


def run_gitlab_job(name: str, spec: dict[str, Any], project: Project, variables: dict[str, str],
                   earlier: list[Job]) -> Job:
    repo = project.checkout(name)
    for previous in earlier:  # a job's dotenv report gives variables to the jobs that need it
        variables = {**variables, **previous.dotenv}
    for previous in earlier:  # GitLab downloads the artifacts of the jobs it needs
        for path in previous.artifacts:
            source, target = previous.repo / path, repo / path  # type: ignore[operator]
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                shutil.copy2(source, target)
    call_log = repo.parent / "hyops-calls.jsonl"
    env = {**project.runner_env(repo, call_log), **variables, "CI_PROJECT_DIR": str(repo),
           "CI_JOB_NAME": name}
    job = Job(name, "success", repo)
    before = [item for item in script_items(spec.get("before_script")) if not install_only(item)]
    skipped = len(script_items(spec.get("before_script"))) - len(before)
    job.steps.append(Step(f"before_script: {skipped} install lines", 0, "(given: engine and hyops installed)"))
    rc, output = run_shell(["bash"], "set -eo pipefail\n" + "\n".join([*before, *script_items(spec["script"])]),
                           repo, env)
    job.steps.append(Step("script", rc, output))
    job.status = "success" if rc == 0 else "failure"
    if spec.get("after_script"):  # its own shell, whatever the script's outcome; never the job's status
        rc, output = run_shell(["bash"], "set -eo pipefail\n" + "\n".join(script_items(spec["after_script"])),
                               repo, env)
        job.steps.append(Step("after_script", rc, output))
    artifacts = spec.get("artifacts", {})
    if artifacts.get("when") == "always" or job.status == "success":
        job.artifacts = [p for p in artifacts.get("paths", []) if (repo / p).exists()]
        job.artifacts += [p for p in artifacts.get("reports", {}).values() if (repo / p).exists()]
        if "dotenv" in artifacts.get("reports", {}):
            job.dotenv = key_values(repo / artifacts["reports"]["dotenv"])
    job.calls = read_calls(call_log)
    return job


# --- the recipes, played ---------------------------------------------------------------------


@dataclass
class Recipe:
    """One recipe: how to play its pipelines and where each job's Markdown ends up."""

    name: str
    path: Path

    def load(self) -> dict[str, Any]:
        return yaml.safe_load(self.path.read_text(encoding="utf-8"))

    def settings(self) -> dict[str, Any]:
        doc = self.load()
        return doc["env"] if self.name == "github" else doc["variables"]

    def on_change_request(self, project: Project, **edits: str) -> Pipeline:
        if self.name == "github":
            return run_github(self.load(), project, event="pull_request", ref="refs/pull/7/merge", edits=edits)
        return run_gitlab(self.load(), project, source="merge_request_event", branch=None, edits=edits)

    def on_main(self, project: Project, **edits: str) -> Pipeline:
        if self.name == "github":
            return run_github(self.load(), project, event="push", ref="refs/heads/main", edits=edits)
        return run_gitlab(self.load(), project, source="push", branch="main", edits=edits)

    def markdown(self, job: Job, gitlab_file: str) -> str:
        """What a person reads: GitHub's job summary, or GitLab's artifact file (which the job
        also prints to its log)."""
        if self.name == "github":
            return job.summary
        text = job.file(gitlab_file)
        assert text in job.steps[-1].output, job.log()  # the script or after_script `cat`s it
        assert all(s.rc == 0 for s in job.steps if s.name == "after_script"), job.log()
        assert gitlab_file in job.artifacts, job.artifacts
        return text

    def lines(self) -> set[tuple[str, ...]]:
        """Every hyops line of the recipe, as the unit test extracts it ($VARS -> PLACEHOLDER)."""
        doc = self.load()
        scripts = github_scripts(doc) if self.name == "github" else gitlab_scripts(doc)
        return {tuple(argv) for _, script in scripts for argv in hyops_commands(script)}




def project_factory(tmp_path: Path, pg_cluster: PgCluster, engine_path: str,
                    test_name: str) -> Callable[[str], Project]:
    """`make(name)`: a repository's own store (a fresh database), cloud and hyops shim (the
    `new_project` fixture of tests/integration/conftest.py)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "hyops"
    shim.write_text(SHIM.format(python=sys.executable, hyops=HYOPS))
    shim.chmod(0o755)

    def make(name: str) -> Project:
        store = SharedStore.create(pg_cluster, f"{test_name}_{name}")
        return Project(tmp_path / name, store, tmp_path / name / "cloud", engine_path, bin_dir)

    return make


def markdown_commands(text: str) -> list[str]:
    """Every `hyops ...` code span of a Markdown text."""
    return [s for line in text.splitlines() for s in code_spans(line) if s.startswith("hyops ")]


def assert_repository_relative(text: str, job: Job, *, naming: str) -> None:
    """The summary's next commands name paths of the repository, relative to its root, which
    exist in this job's checkout; no runner's absolute path appears anywhere."""
    assert job.repo is not None
    commands = markdown_commands(text)
    assert commands, f"no `hyops ...` command in the summary:\n{text}"
    words = [w for c in commands for w in shlex.split(c)]
    assert naming in words, f"{naming} not named in {commands}"
    paths = [w for w in words if "/" in w and not w.startswith("-") and (job.repo / w).exists()]
    assert paths and all(not Path(w).is_absolute() for w in words), commands
    assert str(job.repo.parents[2]) not in text and "/builds/repo" not in text, text


def assert_no_secret(project: Project, pipeline: Pipeline) -> None:
    password = project.secrets["HYOPS_STORE_PASSWORD"]
    for job in pipeline.values():
        assert password not in job.summary and password not in job.log(), f"{job.name} shows the password"


def assert_run_folders_kept(job: Job) -> None:
    """The artifact path `.hyops/runs/` exists: hyops used the default ./.hyops."""
    assert ".hyops/runs/" in job.artifacts, f"{job.name}: artifacts {job.artifacts}\n{job.log()}"
    assert any((job.repo / ".hyops" / "runs").iterdir()), job.name  # type: ignore[operator]


def module_ref(store: SharedStore) -> str:
    keys = store.sql("SELECT key FROM hyops.records ORDER BY key").split()
    assert len(keys) == 1, keys
    return keys[0]


