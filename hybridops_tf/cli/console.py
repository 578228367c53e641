"""The `hyops` console script (pyproject.toml): SIGINT and SIGTERM handled from its first line.

What runs before this module is Python's own start-up (the interpreter, `site`, the few
lines the installer wrote): a signal there meets the disposition hyops inherited, and
docs/running.md (Signals) says what that means. So this module loads nothing but the
signal handling (base/interrupts.py: os, signal, threading), installs it, and only then
imports the CLI and everything it needs.
"""

from __future__ import annotations

from hybridops_tf.base.interrupts import INTERRUPTS


def entry() -> None:
    """Handle SIGINT/SIGTERM (whatever was inherited), then run hyops (cli/main.py)."""
    INTERRUPTS.install()
    from hybridops_tf.cli.main import entry as run

    run()
