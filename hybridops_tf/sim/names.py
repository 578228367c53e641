"""The sim's names shared by the CLI config code (cliconfig.py) and the engine environment
(install.py), apart from both: the CLI imports install.py at every start (it registers the
sim's hook), and it must not pay for cliconfig.py's parser (its regular expressions, its
types, hashlib) unless a user's own CLI config is to be combined."""

from __future__ import annotations

SIM_SOURCE = "hybridops.dev/hybridops/sim"
CLI_CONFIG_ENV = "TF_CLI_CONFIG_FILE"


class CliConfigError(ValueError):
    """The user's TF_CLI_CONFIG_FILE cannot be combined with the sim mirror: the message is
    one line saying why and what to do (the CLI exits 2, nothing run)."""
