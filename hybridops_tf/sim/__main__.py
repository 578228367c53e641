"""`python -m hybridops_tf.sim`: what the mirror's launcher executes.

SIGINT is ignored before anything else, as go-plugin does in a Go provider: a terminal's
Ctrl-C reaches the engine's whole process group, provider plugins included, and it is the
engine that decides how to stop them (StopProvider, then Shutdown; see sim/lifecycle.py).
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)

from hybridops_tf.sim.provider import main  # noqa: E402 (after the signal: imports take time)

if __name__ == "__main__":
    main()
