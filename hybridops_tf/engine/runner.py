"""One engine bound to one module directory and environment: thin calls, no policy.

Read-only helpers (`show -json`, `output -json`, `init`) live here so the operation code
reads as the contract, not as argv plumbing. Every engine process starts here, each in its
turn on the provider cache (engine/plugin_cache.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import EngineError, EngineInitFailed, Interrupted
from hybridops_tf.base.interrupts import name as signal_name
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine import commands, features, plugin_cache, process
from hybridops_tf.engine.binary import EngineInfo

VAR_FILE_ARG = "-var-file=/dev/fd/0"


@dataclass
class Engine:
    info: EngineInfo
    module_dir: Path
    env: Mapping[str, str] = field(default_factory=dict)
    # The run's explicit inputs as tfvars text (ResolvedInputs.var_file), secrets included.
    # Every command that evaluates variables on this engine (features.takes_var_file: init,
    # show and state pull too on Terraform >= 1.15) gets VAR_FILE_ARG and reads it from its stdin,
    # a pipe hyops writes: -var-file precedence, and never in argv, the environment or on
    # disk. Stdin, not a pass_fds descriptor: Terraform 1.0 re-executes itself (panicwrap)
    # passing on only fds 0-2, so /dev/fd/3 and up do not reach the process that reads it.
    inputs: str | None = None
    # Reads that settle a run from evidence: they may start after a signal, which they are not
    # sent (process.run_capture); one that fails is evidence unreadable, never an interrupt.
    settling: bool = False

    def for_settling(self) -> Engine:
        """This engine, for the reads that settle the run it just made."""
        return dataclasses.replace(self, settling=True)

    def argv(self, builder: Callable[..., list[str]], *args: Any, **kwargs: Any) -> list[str]:
        argv = builder(self.info.binary, self.module_dir, *args, **kwargs)
        if self.inputs is not None and len(argv) > 2 and features.takes_var_file(self.info, tuple(argv[2:4])):
            # before any passthrough (the engine's -var were consumed); after `state pull`'s two words
            at = 4 if argv[2] == "state" else 3
            argv.insert(at, VAR_FILE_ARG)
        return argv

    def _stdin(self, argv: Sequence[str]) -> dict[str, bytes]:
        """process.run_* keyword for the var file, when this argv reads it."""
        if self.inputs is None or VAR_FILE_ARG not in argv:
            return {}
        return {"stdin_data": self.inputs.encode("utf-8")}

    def ensure_init(
        self, marker_dir: Path, log_path: Path | None = None, *,
        announce: Callable[[str], None] | None = None, announce_first: bool = False, record: bool = True,
        extra: Sequence[str] | Callable[[], Sequence[str]] = (),
        upgrade: str | None = None,
    ) -> bool:
        """`init` when the module needs it (engine/initcheck.py says why); True if it ran.

        A re-init is announced (the user did not ask for it); the very first one only with
        announce_first. Without `record` (a read-only caller) no stamp is written, and an
        existing `.terraform` no stamp covers is trusted as it is. `upgrade`: the command that
        runs this module's init with `-upgrade`, named when the engine's init asks for it."""
        from hybridops_tf.engine import initcheck

        why = initcheck.init_reason(self.module_dir, marker_dir, write=record)
        if why is None or (not record and why == initcheck.NOT_BY_HYOPS):
            return False
        if announce is not None and (announce_first or why != initcheck.NOT_INITIALISED):
            announce(f"running `init` in {self.module_dir} ({why}): it writes .terraform/ there and "
                     "changes no state")
        self.init(log_path, extra=extra() if callable(extra) else extra, upgrade=upgrade)  # extra: only if it runs
        if record:
            initcheck.remember_init(self.module_dir, marker_dir)
        return True

    def init(self, log_path: Path | None, *, extra: Sequence[str] = (), upgrade: str | None = None) -> None:
        """`init` (no mutation of remote objects). Failure is a preflight failure (exit 1); one
        that needs `-upgrade` (a lock file that pins a version the configuration no longer
        allows) names `upgrade`, hyops's own command for it, not the engine's."""
        from hybridops_tf.base.files import atomic_write_text

        captured = self.init_capture(extra)
        if log_path is not None:
            atomic_write_text(log_path, captured.stdout + captured.stderr, durable=False)  # a log, as run files are
        if captured.returncode != 0 and captured.interrupted is not None:  # cut short: not a failure
            raise Interrupted(f"interrupted by {signal_name(captured.interrupted)}: `init` in {self.module_dir} "
                              f"stopped (exit {captured.returncode}); no record or state was changed")
        if captured.returncode != 0:
            detail = error_blocks(captured.stderr or captured.stdout)
            where = f"; the whole output: {log_path}" if log_path is not None else ""
            then = (f"; next: `{upgrade}` (it may select newer provider versions: review the lock file's "
                    "change)") if upgrade and asks_upgrade(captured.stderr + captured.stdout) else ""
            raise EngineInitFailed(f"engine init failed in {self.module_dir} (exit {captured.returncode}): "
                                   f"{detail}{where}{then}")

    def init_capture(self, extra: Sequence[str] = ()) -> process.Captured:
        """`init [extra]` run to its end, its output captured; the inputs as its var file where
        this engine's init evaluates variables."""
        argv = [*self.argv(commands.init), *extra]
        reinstalls = features.CACHE_REINSTALLS_UNLOCKED(self.info)
        with plugin_cache.turn(self.env, self.module_dir, init=True, reinstalls=reinstalls) as env:
            return process.run_capture(argv, env=env, stdin_data=self._stdin(argv).get("stdin_data"))

    def capture_json(self, argv: Sequence[str]) -> dict[str, Any]:
        with plugin_cache.turn(self.env, self.module_dir) as env:
            captured = process.run_capture(argv, env=env, settling=self.settling,
                                           stdin_data=self._stdin(argv).get("stdin_data"))
        if captured.returncode != 0 and captured.interrupted is not None and not self.settling:
            raise Interrupted(f"interrupted by {signal_name(captured.interrupted)}: `{' '.join(argv[2:4])}` "
                              f"stopped (exit {captured.returncode})")
        if captured.returncode != 0:
            raise EngineError(
                f"`{' '.join(argv[1:])}` failed (exit {captured.returncode}): "
                f"{_last_error_line(captured.stderr or captured.stdout)}"
            )
        try:
            doc = numbers.loads(captured.stdout or "{}")  # numbers as their text (base/numbers.py)
        except (ValueError, RecursionError) as err:
            raise EngineError(f"`{' '.join(argv[1:])}` printed invalid JSON: {err}") from err
        if not isinstance(doc, dict):
            raise EngineError(f"`{' '.join(argv[1:])}` printed JSON that is not an object")
        return doc

    def show_state_doc(self) -> dict[str, Any]:
        return self.capture_json(self.argv(commands.show_state))

    def show_plan_doc(self, plan_file: Path) -> dict[str, Any]:
        return self.capture_json(self.argv(commands.show_plan, plan_file))

    def output_doc(self) -> dict[str, Any]:
        return self.capture_json(self.argv(commands.output))

    def query(self, timeout: float | None) -> process.Captured:
        """`query -json` in the module directory, its var file on stdin; killed at `timeout`
        (reconcile's query lookups, reconcile/lookup/query.py). The caller reads the output."""
        argv = self.argv(commands.query)
        with plugin_cache.turn(self.env, self.module_dir) as env:
            return process.run_capture(argv, env=env, timeout=timeout,
                                       stdin_data=self._stdin(argv).get("stdin_data"))

    def stream(
        self,
        argv: Sequence[str],
        on_line: Callable[[str], None],
        stderr_log: Path | None,
        on_stderr_line: Callable[[str], None] | None = None,
        journal: process.Journal | None = None,
    ) -> process.ProcessResult:
        with plugin_cache.turn(self.env, self.module_dir) as env:
            return process.run_streaming(
                argv, on_stdout_line=on_line, stderr_log=stderr_log, on_stderr_line=on_stderr_line, env=env,
                journal=journal, **self._stdin(argv),
            )


# The engines' words when the lock file pins what the configuration no longer allows (Terraform
# and OpenTofu alike: `must use terraform init -upgrade`, `Run "tofu init -upgrade"`; wrapped anywhere)
_ASKS_UPGRADE = re.compile(r"\binit\s+-upgrade\b")


def asks_upgrade(output: str) -> bool:
    """Whether an engine's failed init says it needs `init -upgrade`."""
    return _ASKS_UPGRADE.search(output) is not None


def error_blocks(text: str, limit: int = 1500) -> str:
    """The engine's error messages in its own words, each `Error: SUMMARY` with its detail
    joined on one line (what `init`, which has no -json before Terraform 1.9, prints in its
    boxes); the first error line, or the last line, when no box is found. For people to read:
    nothing is decided on it."""
    blocks: list[str] = []
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip(" │╷╵\t")
        if line.startswith("Error:"):
            current = [line]
            blocks.append("")
        elif current is not None and raw.lstrip().startswith("╵"):
            current = None
            continue
        elif current is not None and line:
            current.append(line)
        if current is not None:
            blocks[-1] = current[0] + (": " + " ".join(current[1:]) if len(current) > 1 else "")
    said = "; ".join(b for b in blocks if b)
    if not said:
        return _last_error_line(text)
    return said if len(said) <= limit else said[: limit - 3].rstrip() + "..."


def _last_error_line(text: str) -> str:
    lines = [ln.strip(" │╷╵\t") for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    for ln in lines:
        if ln.startswith("Error:"):
            return ln
    return lines[-1] if lines else "no output"
