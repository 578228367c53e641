"""`hyops init`: the engine's `init` on request, under the module lock.

hyops re-runs init on its own when a module's child modules, providers or backend changed
(hybridops_tf.engine.initcheck); this is the explicit form, for `init -upgrade` and friends. init
changes no remote object and no record: it writes `.terraform/` and the lock file in the
module directory, so it takes the module lock to never race an apply on the same module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hybridops_tf.base.errors import ExitCode, UsageError
from hybridops_tf.base.interrupts import name as signal_name
from hybridops_tf.engine import features, initcheck, process
from hybridops_tf.engine.runner import Engine
from hybridops_tf.operation import run_inputs
from hybridops_tf.record import layout
from hybridops_tf.record.address import ModuleTarget, record_key
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import new_run_id
from hybridops_tf.store import backend


@dataclass(frozen=True, slots=True)
class InitOutcome:
    exit_code: int
    output: str  # the engine's own output, stdout then stderr
    message: str


def run_init(target: ModuleTarget, ws: Runtime, passthrough: Sequence[str],
             lock_timeout: float = 0, workspace: str | None = None) -> InitOutcome:
    """Run `init -input=false -no-color [passthrough]` in the module directory; with the last
    run's inputs where the engine's init evaluates variables (Terraform >= 1.15, OpenTofu >= 1.8)."""
    ws.ensure_root()
    info = ws.engine_info()
    key = record_key(target.ref, workspace)
    engine = Engine(info, target.directory, ws.engine_env(target.directory, workspace),
                    inputs=_recorded_var_file(ws, target, key) if features.takes_var_file(info, ("init",)) else None)
    with process.FORWARDER, ws.store.lock(key, new_run_id("init"), lock_timeout):
        captured = engine.init_capture([*backend.init_args(target.directory, target.ref, ws.record_refs),
                                        *passthrough])
        if captured.returncode == 0:
            initcheck.remember_init(target.directory, layout.init_cache(ws.root))
    output = captured.stdout + captured.stderr
    if captured.interrupted is not None:  # the signal reached it: whatever it exited with, it was cut short
        return InitOutcome(ExitCode.INTERRUPTED, output, f"interrupted by {signal_name(captured.interrupted)}: "
                           f"init of {target.ref} stopped (engine exit {captured.returncode}); no record "
                           "or state was changed")
    if captured.returncode != 0:
        from hybridops_tf.engine.runner import asks_upgrade
        from hybridops_tf.record.advice import Commands, where_of

        then = (f"; next: `{Commands().init(where_of(target.ref, target.directory, workspace), '-upgrade')}`"
                if asks_upgrade(output) and "-upgrade" not in passthrough else "")
        return InitOutcome(ExitCode.FAILED, output,
                           f"init of {target.ref} failed (engine exit {captured.returncode}); nothing else ran{then}")
    return InitOutcome(ExitCode.OK, output, f"init of {target.ref}: ok")


def _recorded_var_file(ws: Runtime, target: ModuleTarget, key: str) -> str | None:
    """The last run's inputs of record `key` (rerun.inputs.yml, secrets left out: they were
    never written) as the engine's var file, for an engine whose init evaluates variables (a
    module source from a variable). None when they do not cover what the module requires: the
    engine's init then names the variable it misses, as a raw init would."""
    try:
        return run_inputs.resolve(ws, target, None, (), None, key=key, note=False).var_file()
    except UsageError:
        return None
