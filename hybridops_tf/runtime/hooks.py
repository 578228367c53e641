"""Extra engine environment for some modules, supplied by whoever composes hyops.

Why a hook: the simulated cloud (hybridops_tf.sim) needs its provider mirror in the engine's
environment for every module that uses it, yet the core must not import the sim. The
composition root (the CLI entry, hybridops_tf.cli.main) registers the sim's hook at import;
the core only asks the registered hooks. A hook is typed structurally (EnvironmentHook), so
the sim implements it with a plain class and imports nothing of the core.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

__all__ = ["EnvironmentHook", "applying", "register"]


class EnvironmentHook(Protocol):
    """What one hook gives the engine for the modules it applies to."""

    def applies(self, module_dir: Path) -> bool:
        """True when a module (or a module it calls) needs this hook's environment."""
        ...

    def guarded_path(self, runtime_root: Path) -> Path:
        """A path below the runtime root that the engine will execute: refused if symlinked."""
        ...

    def engine_env(self, runtime_root: Path) -> dict[str, str]:
        """The environment additions for such a module (may lay files under runtime_root).

        Raises ModuleNotFoundError, its message one line naming the fix, when a package the
        hook's engine processes need is not installed: a set-up error (exit 2), nothing run.
        A hook may also name, in a `usage_errors` attribute (a tuple of exception classes),
        what it raises when the user's own settings rule its environment out (the sim: a
        TF_CLI_CONFIG_FILE it cannot combine with its mirror); the message, one line saying
        why and what to do, becomes a usage error too (exit 2)."""
        ...


_HOOKS: list[EnvironmentHook] = []


def register(hook: EnvironmentHook) -> None:
    """Add a hook; registering the same one again changes nothing."""
    if not any(known is hook for known in _HOOKS):
        _HOOKS.append(hook)


def applying(module_dir: Path) -> tuple[EnvironmentHook, ...]:
    """The registered hooks that apply to a module, in the order they were registered."""
    return tuple(hook for hook in _HOOKS if hook.applies(module_dir))
