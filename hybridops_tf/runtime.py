"""The runtime root's per-run chores: inputs, engine environment, run-folder meta/result.

operation.py reads as the contract; this module holds the plumbing it needs around it.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf import __version__
from hybridops_tf import inputs as inputs_mod
from hybridops_tf.engine import binary
from hybridops_tf.engine.runner import Engine
from hybridops_tf.errors import RefusedError
from hybridops_tf.fsutil import (
    atomic_write_text,
    ensure_dir,
    refuse_symlinks,
    register_private_root,
)
from hybridops_tf.modules import ModuleTarget
from hybridops_tf.record import module_id, utc_now
from hybridops_tf.redact import redact_argv
from hybridops_tf.runs import RunFolder

if TYPE_CHECKING:
    from hybridops_tf.inputs import ResolvedInputs


class Runtime:
    def __init__(self, root: Path) -> None:
        self.root = root
        register_private_root(root)

    def ensure_root(self) -> None:
        try:
            ensure_dir(self.root)
        except OSError as err:
            raise RefusedError(
                f"runtime root {self.root} is not usable: {err.strerror or err}; "
                "pass --runtime-root DIR (or HYOPS_RUNTIME_ROOT) pointing to a writable directory"
            ) from None

    def rerun_inputs_path(self, module_ref: str) -> Path:
        return self.root / "config" / "modules" / module_id(module_ref) / "rerun.inputs.yml"

    def resolve_inputs(
        self,
        target: ModuleTarget,
        inputs_file: Path | None,
        var_options: Sequence[str],
        stack_inputs: Mapping[str, Any] | None,
        extra_sensitive: frozenset[str] = frozenset(),
    ) -> ResolvedInputs:
        """Step 1: every input parses, names a declared variable, and covers the required ones.

        extra_sensitive marks inputs secret although their variable is not (a value wired
        from a sensitive upstream output): they are redacted like sensitive variables.
        """
        specs = inputs_mod.read_variables(target.directory, self.hcl_cache())
        from_file = inputs_mod.load_inputs_file(inputs_file) if inputs_file is not None else None
        from_vars = inputs_mod.parse_var_options(var_options, specs)
        resolved = inputs_mod.resolve_inputs(
            specs,
            stack_inputs=stack_inputs,
            inputs_file=from_file,
            var_options=from_vars,
            module_dir=str(target.directory),
            inputs_file_source=f"--inputs {inputs_file}",
        )
        inputs_mod.remember(target.directory, self.hcl_cache())
        if extra_sensitive:
            from dataclasses import replace

            resolved = replace(resolved, sensitive_names=resolved.sensitive_names | extra_sensitive)
        return resolved

    def engine_cache(self) -> Path:
        return self.root / "cache" / "engines.json"

    def hcl_cache(self) -> Path:
        """Parsed module variables/outputs (declarations.py); reading it writes nothing."""
        return self.root / "cache" / "hcl"

    def engine_for(
        self,
        target: ModuleTarget,
        engine_opt: str | None,
        resolved: ResolvedInputs | None,
        workspace: str | None,
        folder: RunFolder | None,
    ) -> Engine:
        """Step 3 preflight: engine found, version read (cached), environment set, `init` if needed."""
        info = binary.resolve(engine_opt, self.engine_cache())
        engine = Engine(info, target.directory, self.engine_env(target.directory, resolved, workspace))
        markers = self.root / "cache" / "init"
        if engine.needs_init(markers):
            engine.init(folder.path / "init.log" if folder is not None else None, markers)
        return engine

    def engine_env(self, directory: Path, resolved: ResolvedInputs | None, workspace: str | None) -> dict[str, str]:
        """The engine's extra environment for a module: TF_VAR_ inputs, the sim mirror (its
        launcher path refused if symlinked: the engine will execute what it finds there), the
        workspace. RefusedError when the launcher path is unsafe."""
        env: dict[str, str] = dict(resolved.engine_env()) if resolved is not None else {}
        from hybridops_tf.sim import install as sim_install

        if sim_install.module_uses_sim(directory):
            try:
                refuse_symlinks(sim_install.launcher_path(self.root))
            except OSError as err:
                raise RefusedError(f"{err}; nothing was run") from None
            env.update(sim_install.sim_engine_env(self.root))
        if workspace:
            env["TF_WORKSPACE"] = workspace
        return env

    def meta(self, req: Any, run_id: str, resolved: ResolvedInputs) -> dict[str, Any]:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = str(os.getuid())
        return {
            "command": req.command,
            "argv": redact_argv(list(req.argv), resolved.sensitive_names),
            "module_ref": req.target.ref,
            "module_dir": str(req.target.directory),
            "run_id": run_id,
            "workspace": req.workspace,
            "started_at": utc_now(),
            "hyops_version": __version__,
            "python": ".".join(map(str, sys.version_info[:3])),
            "pid": os.getpid(),
            "host": os.uname().nodename,
            "user": user,
        }

    def write_inputs(self, target: ModuleTarget, folder: RunFolder, resolved: ResolvedInputs) -> tuple[Path, Path]:
        """resolved.inputs.yml (this run) and rerun.inputs.yml (the module's), secrets redacted."""
        atomic_write_text(folder.resolved_inputs_path, inputs_mod.dump_yaml(resolved.redacted()))
        rerun = self.rerun_inputs_path(target.ref)
        atomic_write_text(rerun, inputs_mod.dump_yaml(resolved.rerun_inputs()))
        return folder.resolved_inputs_path, rerun

    def finish_run(self, folder: RunFolder, meta: dict[str, Any], exit_code: int, result: dict[str, Any]) -> None:
        """meta gets its end, then result.json is written last (its presence = run finished)."""
        meta = {**meta, "finished_at": utc_now(), "exit_code": exit_code}
        try:
            folder.write_meta(meta)
            folder.write_result({"run_id": folder.run_id, "exit_code": exit_code, **result})
        except OSError as err:
            import sys

            print(f"hyops: warning: could not finish run folder {folder.path}: {err}", file=sys.stderr)
