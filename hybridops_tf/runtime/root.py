"""The runtime root as one command uses it, built once (by the CLI, or a test) and passed
down: its paths and caches, its record store (opened once), the engine of a module (found,
environment set, `init`ed) and its environment.

A run's inputs are operation/run_inputs.py's; its folder's meta/result are run_folder.py's; operation/steps.py
reads as the contract and calls each of them in turn.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from hybridops_tf.base import notices
from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.base.files import ensure_dir, refuse_symlinks, register_private_root
from hybridops_tf.record import layout
from hybridops_tf.record.address import ModuleTarget, key_of_module_id, split_key
from hybridops_tf.store import documents

if TYPE_CHECKING:  # the engine's code loads only for a command that runs it
    from hybridops_tf.engine.binary import EngineInfo
    from hybridops_tf.engine.runner import Engine
    from hybridops_tf.inputs.values import ResolvedInputs
    from hybridops_tf.runtime.run_folder import RunFolder
    from hybridops_tf.store import Admin, Store


class Runtime:
    """One runtime root and what a command needs of it. The record store is the one selected
    (`--store`/HYOPS_STORE, else the local root), opened when first asked and then kept: every
    room of a command reads and writes through this one object. So is the engine: `engine` as
    the command was given it (`--engine`/HYOPS_ENGINE; None: tofu, else terraform, on PATH),
    found and its version read once (`engine_info`)."""

    def __init__(self, root: Path, engine: str | None = None) -> None:
        self.root = root
        self.engine = engine
        register_private_root(root)
        self._store: Store | None = None
        self._engine_info: EngineInfo | None = None
        self._engine_remembered = False  # its version is in the root's version cache
        self._engine_lock = threading.Lock()  # a stack's members ask for it from their threads

    @property
    def store(self) -> Store:
        if self._store is None:
            from hybridops_tf.store import open_store

            self._store = open_store(self.root)
        return self._store

    def admin(self) -> Admin:
        """The store as one to administer (`hyops store status`, the target of `store
        import-local`); UsageError when the store in use has no such side (the local root)."""
        admin = self.store.admin()
        if admin is None:
            raise UsageError(f"the {self.store.describe()} is no store to administer: pass --store "
                             "postgresql://USER@HOST:PORT/DB or sqlite:///PATH, or set HYOPS_STORE "
                             "(docs/shared-store.md)")
        return admin

    def ensure_root(self) -> None:
        try:
            ensure_dir(self.root)
        except OSError as err:
            raise RefusedError(
                f"runtime root {self.root} is not usable: {err.strerror or err}; "
                "pass --runtime-root DIR (or HYOPS_RUNTIME_ROOT) pointing to a writable directory"
            ) from None

    def rerun_inputs_path(self, module_ref: str, *, fetch: bool = True) -> Path:
        """rerun.inputs.yml of a record key: the local file readers and suggested commands use,
        brought up to date from the store's copy when `fetch` (store/documents.py)."""
        if fetch:
            return self.store.fetch_document(documents.RERUN_INPUTS, module_ref)
        return documents.local_path(self.root, documents.RERUN_INPUTS, module_ref)

    def rerun_inputs_key(self, path: Path) -> str | None:
        """The record key whose rerun.inputs.yml `path` names in this root (None: another file)."""
        try:
            rel = Path(os.path.abspath(path)).relative_to(layout.rerun_inputs_dir(Path(os.path.abspath(self.root))))
        except ValueError:
            return None
        if len(rel.parts) != 2 or rel.parts[1] != layout.RERUN_INPUTS_FILE:
            return None
        return key_of_module_id(rel.parts[0])

    def engine_cache(self) -> Path:
        return layout.engine_cache(self.root)

    def hcl_cache(self) -> Path:
        """Parsed module variables/outputs (inputs/declarations.py); reading it writes nothing."""
        return layout.hcl_cache(self.root)

    def record_refs(self) -> set[str]:
        """The module refs the store holds records of, in any workspace."""
        return {split_key(key)[0] for key in self.store.keys()}

    def engine_info(self, *, remember: bool = True) -> EngineInfo:
        """The engine binary and its version, found once for the command (EngineError when
        there is none). remember=False: a read-only command, which writes no version cache."""
        from hybridops_tf.engine import binary

        with self._engine_lock:
            if self._engine_info is None:
                self._engine_info = binary.resolve(self.engine, self.engine_cache(), remember=remember)
                self._engine_remembered = remember
            elif remember and not self._engine_remembered:  # found by a read that wrote nothing
                binary.remember_info(self._engine_info, self.engine_cache())
                self._engine_remembered = True
            return self._engine_info

    def reads_tofu(self) -> bool:
        """Whether the engine is OpenTofu, whose loader also reads `.tofu`/`.tofu.json` files
        (base/config_names.py): the module's variables are read as it reads them. The engine is
        found once for the command, here without writing the version cache (a refused input
        leaves the root untouched; a run that goes on writes it). No engine found: False
        (Terraform's files), and the run says why when it needs the engine."""
        from hybridops_tf.base.errors import EngineError

        try:
            return self.engine_info(remember=False).kind == "tofu"
        except EngineError:
            return False

    def engine_for(
        self,
        target: ModuleTarget,
        resolved: ResolvedInputs | None,
        workspace: str | None,
        folder: RunFolder | None,
    ) -> Engine:
        """Step 3 preflight: engine found, version read (cached), environment set, `init` if needed."""
        from hybridops_tf.engine.runner import Engine

        info = self.engine_info()
        engine = Engine(info, target.directory, self.engine_env(target.directory, workspace),
                        inputs=resolved.var_file() if resolved is not None else None)
        from hybridops_tf.record.advice import Commands, where_of
        from hybridops_tf.store import backend

        engine.ensure_init(layout.init_cache(self.root), folder.path / "init.log" if folder is not None else None,
                           announce=notices.plain,
                           extra=lambda: backend.init_args(target.directory, target.ref, self.record_refs),
                           upgrade=Commands().init(where_of(target.ref, target.directory, workspace), "-upgrade"))
        return engine

    def engine_env(self, directory: Path, workspace: str | None) -> dict[str, str]:
        """The engine's extra environment for a module: what each registered hook that
        applies to it adds (the sim mirror; its guarded path, the launcher, refused if
        symlinked: the engine will execute what it finds there), the workspace.
        RefusedError when a guarded path is unsafe. Inputs are not here: they travel in
        the engine's var file (Engine.inputs = resolved.var_file()), so they rank as
        -var-file, above the module's tfvars; the caller's own TF_VAR_ pass through as they
        are."""
        env: dict[str, str] = {}
        from hybridops_tf.runtime import hooks

        for hook in hooks.applying(directory):
            try:
                refuse_symlinks(hook.guarded_path(self.root))
            except OSError as err:
                raise RefusedError(f"{err}; nothing was run") from None
            try:
                env.update(hook.engine_env(self.root))
            except ModuleNotFoundError as err:  # a requirement not installed (Runtime.engine_env)
                raise UsageError(str(err)) from None
            except getattr(hook, "usage_errors", ()) as err:  # the user's own setup rules it out
                raise UsageError(f"{err}; nothing was run") from None
        # always explicit: the record key and the engine must agree on the workspace, whatever
        # the caller's TF_WORKSPACE or a `workspace select` in the module directory says
        env["TF_WORKSPACE"] = workspace or "default"
        from hybridops_tf.store import backend

        env.update(backend.state_lock_wait_env(directory, os.environ))
        from hybridops_tf.engine import plugin_cache

        env.update(plugin_cache.cache_env(layout.plugin_cache(self.root), os.environ))
        return env
