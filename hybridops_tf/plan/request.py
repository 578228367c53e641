"""What one `hyops plan` of one module is asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.lifecycle import Command

if TYPE_CHECKING:
    from hybridops_tf.inputs.values import CliInput
    from hybridops_tf.runtime.root import Runtime


@dataclass
class PlanRequest:
    target: ModuleTarget
    runtime: Runtime
    inputs_file: Path | None = None
    var_options: Sequence[str | CliInput] = ()  # --var texts, or the command line's inputs in order
    stack_inputs: dict | None = None
    sensitive_inputs: frozenset[str] = frozenset()
    passthrough: Sequence[str] = ()
    argv: Sequence[str] = ()
    command: Command = Command.PLAN
    workspace: str | None = None
    detailed_exitcode: bool = False
    out: Path | None = None  # keep the engine's plan file here (0600), with its sidecar
    destroy: bool = False  # a destroy plan (the engine's -destroy)
    lock_timeout: float = 0  # the engine's -lock-timeout for its state lock (plan takes no hyops lock)
