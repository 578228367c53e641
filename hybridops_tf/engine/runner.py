"""One engine bound to one module directory and environment: thin calls, no policy.

Read-only helpers (`show -json`, `output -json`, `init`) live here so the operation code
reads as the contract, not as argv plumbing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridops_tf.engine import commands, process
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.errors import EngineError


@dataclass
class Engine:
    info: EngineInfo
    module_dir: Path
    env: Mapping[str, str] = field(default_factory=dict)

    def argv(self, builder: Callable[..., list[str]], *args: Any, **kwargs: Any) -> list[str]:
        return builder(self.info.binary, self.module_dir, *args, **kwargs)

    def _config_fingerprint(self) -> str:
        import hashlib

        parts = []
        for path in sorted(self.module_dir.iterdir()):
            if path.suffix == ".tf" or path.name == ".terraform.lock.hcl":
                st = path.stat()
                parts.append(f"{path.name}:{st.st_mtime_ns}:{st.st_size}")
        return hashlib.sha256("|".join([str(self.module_dir), *parts]).encode()).hexdigest()

    def needs_init(self, marker_dir: Path | None = None) -> bool:
        """No `.terraform` yet: a raw user would run `init` first, so do we.

        A module with no providers or backend gets no `.terraform` from init; marker_dir
        remembers that init already ran for exactly these files, so it is not repeated.
        """
        if (self.module_dir / ".terraform").is_dir():
            return False
        if marker_dir is None:
            return True
        return not (marker_dir / self._config_fingerprint()).exists()

    def init(self, log_path: Path | None, marker_dir: Path | None = None) -> None:
        """`init` (no mutation of remote objects). Failure is a preflight failure (exit 1)."""
        from hybridops_tf.fsutil import atomic_write_text

        captured = process.run_capture(self.argv(commands.init), env=self.env)
        if log_path is not None:
            atomic_write_text(log_path, captured.stdout + captured.stderr)
        if captured.returncode != 0:
            detail = _last_error_line(captured.stderr or captured.stdout)
            raise EngineError(f"engine init failed in {self.module_dir} (exit {captured.returncode}): {detail}")
        if marker_dir is not None and not (self.module_dir / ".terraform").is_dir():
            try:
                atomic_write_text(marker_dir / self._config_fingerprint(), "")
            except OSError:
                pass  # only costs another init next time

    def capture_json(self, argv: Sequence[str]) -> dict[str, Any]:
        captured = process.run_capture(argv, env=self.env)
        if captured.returncode != 0:
            raise EngineError(
                f"`{' '.join(argv[1:])}` failed (exit {captured.returncode}): "
                f"{_last_error_line(captured.stderr or captured.stdout)}"
            )
        try:
            doc = json.loads(captured.stdout or "{}")
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

    def stream(
        self,
        argv: Sequence[str],
        on_line: Callable[[str], None],
        stderr_log: Path | None,
        on_stderr_line: Callable[[str], None] | None = None,
    ) -> process.ProcessResult:
        return process.run_streaming(
            argv, on_stdout_line=on_line, stderr_log=stderr_log, on_stderr_line=on_stderr_line, env=self.env
        )


def _last_error_line(text: str) -> str:
    lines = [ln.strip(" │╷╵\t") for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    for ln in lines:
        if ln.startswith("Error:"):
            return ln
    return lines[-1] if lines else "no output"
