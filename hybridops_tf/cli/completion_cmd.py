"""`hyops completion SHELL`: print Click's own completion script for hyops."""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion_cmd(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish).

    The script asks hyops itself (env _HYOPS_COMPLETE) what to complete, so commands,
    options and paths stay current. Add one line to the shell's rc file.

    \b
    Exit codes:
      0  printed
      2  another shell (usage error)

    \b
    Example:
      eval "$(hyops completion bash)"    # in ~/.bashrc
      eval "$(hyops completion zsh)"     # in ~/.zshrc
      hyops completion fish | source     # in ~/.config/fish/config.fish
    """
    from click.shell_completion import get_completion_class

    from hybridops_tf.cli.main import cli

    completion_class = get_completion_class(shell)
    assert completion_class is not None  # every name in SHELLS is one of Click's
    click.echo(completion_class(cli, {}, "hyops", "_HYOPS_COMPLETE").source())
