"""`python -m hybridops_tf.sim`: what the mirror's launcher executes.

SIGINT is ignored before anything else, as go-plugin does in a Go provider: a terminal's
Ctrl-C reaches the engine's whole process group, provider plugins included, and it is the
engine that decides how to stop them (StopProvider, then Shutdown; see sim/lifecycle.py).

Without the `[sim]` extra (no `pyvider` package) it says so in one line on stderr and exits 1,
the line hyops itself gives before starting the engine: the engine would only show
"Unrecognized remote plugin message" for it.
"""

import signal
import sys

signal.signal(signal.SIGINT, signal.SIG_IGN)

try:
    from hybridops_tf.sim.plugin import main  # noqa: E402 (after the signal: imports take time)
    from hybridops_tf.sim.wire import pb  # noqa: E402

    pb()  # the generated protocol messages, loaded now: a missing package is said here, in one line
except ModuleNotFoundError as err:
    from hybridops_tf.sim.install import SIM_PACKAGE, sim_extra_missing

    if (err.name or "").partition(".")[0] != SIM_PACKAGE:
        raise
    print(f"hyops: error: {sim_extra_missing(sys.executable)}", file=sys.stderr, flush=True)
    sys.exit(1)

if __name__ == "__main__":
    main()
