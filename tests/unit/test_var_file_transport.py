"""The explicit inputs' var file: which engine commands get `-var-file=/dev/fd/0`, and the
pipe on the engine's stdin that carries it (engine/runner.py, engine/stdin_feed.py).

The real engines (Terraform 1.0.3 and 1.11) are proven in
tests/integration/test_inputs_precedence.py; here tiny Python children read the path
`/dev/fd/0` the way the engine does (open by name, read to EOF).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from hybridops_tf.engine import commands, process
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.runner import VAR_FILE_ARG, Engine

READ_VAR_FILE = """
import sys
with open(sys.argv[1], "rb") as handle:
    data = handle.read()
sys.stdout.write(str(len(data)) + " " + data[:40].decode())
"""


def engine(inputs: str | None) -> Engine:
    """An engine whose init and reads evaluate no variables (OpenTofu before 1.8's early
    evaluation; the engines whose do: tests/unit/test_engine_features.py)."""
    return Engine(EngineInfo(Path("/bin/tofu"), "1.7.3", "tofu"), Path("/mod"), {}, inputs=inputs)


@pytest.mark.parametrize(("builder", "args", "gets"), [
    (commands.apply, (), True),
    (commands.destroy, (), True),
    (commands.plan, (None,), True),
    (commands.import_, ("a.b", "id-1"), True),
    (commands.init, (), False),
    (commands.show_state, (), False),
    (commands.output, (), False),
    (commands.state_pull, (), False),
])
def test_only_commands_that_evaluate_variables_get_the_var_file(builder, args, gets) -> None:  # type: ignore[no-untyped-def]
    argv = engine('a = "1"\n').argv(builder, *args)
    assert (VAR_FILE_ARG in argv) is gets
    if gets:
        assert argv.index(VAR_FILE_ARG) == 3  # right after the subcommand, before any passthrough
    assert VAR_FILE_ARG not in engine(None).argv(builder, *args)


def test_the_var_file_argument_holds_no_value() -> None:
    argv = engine('password = "hunter2"\n').argv(commands.apply, ["-parallelism=2"])
    assert not any("hunter2" in arg for arg in argv)


@pytest.mark.parametrize("size", [10, 1_000_000])
def test_a_child_reads_the_whole_var_file_from_dev_fd_0(size: int) -> None:
    """Larger than any pipe buffer: the writer thread never blocks the spawn."""
    data = b"x" * size
    captured = process.run_capture([sys.executable, "-c", READ_VAR_FILE, "/dev/fd/0"], stdin_data=data)
    assert captured.returncode == 0, captured.stderr
    assert captured.stdout.split(" ")[0] == str(size)


def test_streaming_children_read_it_too() -> None:
    lines: list[str] = []
    result = process.run_streaming([sys.executable, "-c", READ_VAR_FILE, "/dev/fd/0"],
                                   on_stdout_line=lines.append, stdin_data=b'a = "b"\n')
    assert result.returncode == 0 and lines == ['8 a = "b"']


def test_a_child_that_never_reads_leaves_no_thread_or_descriptor_behind() -> None:
    before = set(os.listdir("/proc/self/fd"))
    threads = threading.active_count()
    captured = process.run_capture([sys.executable, "-c", "pass"], stdin_data=b"y" * 1_000_000)
    assert captured.returncode == 0
    for _ in range(200):  # the writer ends on EPIPE once the child and our read end are gone
        if threading.active_count() <= threads:
            break
        threading.Event().wait(0.01)
    assert threading.active_count() <= threads
    assert set(os.listdir("/proc/self/fd")) <= before


def test_command_line_inputs_keep_the_order_typed_and_engine_flags_come_last(tmp_path: Path) -> None:
    import click
    from click.testing import CliRunner

    from hybridops_tf.cli.options import PassthroughCommand, cli_inputs, module_input_options
    from hybridops_tf.inputs.values import CliInput

    seen: dict[str, object] = {}

    @click.command(cls=PassthroughCommand)
    @module_input_options
    @click.pass_context
    def cmd(ctx: click.Context, inputs_files: tuple[Path, ...], var_options: tuple[str, ...],
            var_files: tuple[Path, ...]) -> None:
        seen["result"] = cli_inputs(ctx, var_options, inputs_files, var_files, tmp_path)

    args = ["--var", "a=1", "--inputs", "x.yml", "--var=b=2", "--var-file", "y.tfvars",
            "--", "-var-file=z.tfvars", "-target=r", "-var", "c=3"]
    here = tmp_path / "here"
    here.mkdir()
    for path in (here / "x.yml", here / "y.tfvars", tmp_path / "z.tfvars"):  # each where it is read
        path.write_text("")
    previous = Path.cwd()
    os.chdir(here)
    try:
        assert CliRunner().invoke(cmd, args).exit_code == 0
    finally:
        os.chdir(previous)
    assert seen["result"] == ([
        CliInput("--var", "a=1"), CliInput("--inputs", "x.yml"), CliInput("--var", "b=2"),
        CliInput("--var-file", "y.tfvars"), CliInput("--var-file", str(tmp_path / "z.tfvars")),
        CliInput("--var", "c=3", engine_syntax=True)], ["-target=r"])
