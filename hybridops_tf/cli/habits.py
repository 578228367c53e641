"""Habits from raw tofu, read before Click parses: argv in, argv out.

People coming from `tofu` type `hyops apply mod -var env=dev`; Click reads `-var` as `-v -a -r`
and says "No such option '-v'". So before Click parses a command's arguments, the part before a
literal `--` is rewritten here:

- the engine's single-dash spellings become hyops's own (`-var X` -> `--var X`, `-json` ->
  `--json`, `-lock-timeout=10s` -> `--lock-timeout 10`) where the command has that option;
- engine-only flags (`-target`, `-replace`, `-parallelism`, `-refresh=false`, `-lock=false`) move
  after `--` where the command hands arguments to the engine;
- what hyops always does (`-input=false`, `-no-color`) is dropped;
- anything else single-dash is a one-line UsageError (exit 2) naming the spelling to use;
- global options typed after the command path (`hyops status --all --runtime-root X`) move in
  front of it, where Click reads them.

Values are never rewritten: which options take one is read from the Click command itself, so
`--var x=-1` or `--ref -odd` stay as typed. The rewriting functions are pure; only
`rewrite_argv` walks Click's command tree to find the command being run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import click

from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.lazy_dataclass import dataclass


@dataclass(frozen=True)
class CommandShape:
    """What the rewriting needs to know of one command, read from Click (`shape_of`)."""

    path: str  # "apply", "stack apply": how hints name the command
    options: frozenset[str]  # every spelling it declares, flags and help included
    takes_value: frozenset[str]  # the spellings whose next word is their value
    passthrough: bool = False  # words after `--` go to the engine (PassthroughCommand)

    def has(self, option: str) -> bool:
        return option in self.options


def shape_of(command: click.Command, path: str, help_names: Sequence[str] = ("-h", "--help")) -> CommandShape:
    """The CommandShape of a Click command (its own options, not its parents')."""
    options: set[str] = set(help_names)
    takes_value: set[str] = set()
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        names = {*param.opts, *param.secondary_opts}
        options |= names
        if not (param.is_flag or param.count):
            takes_value |= set(param.opts)
    return CommandShape(path, frozenset(options), frozenset(takes_value),
                        bool(getattr(command, "passes_through", False)))


# --- the habits ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Words:
    """What one habit becomes: words for hyops (before `--`) and for the engine (after it)."""

    hyops: tuple[str, ...] = ()
    engine: tuple[str, ...] = ()


@dataclass(frozen=True)
class Habit:
    """An engine flag as a tofu user types it, and what hyops makes of it."""

    flag: str  # "-var"
    takes_value: bool  # `-var X` as well as `-var=X` (Go's bool flags take `=` only)
    example: str  # a value, for "needs a value, e.g. ..."
    translate: Callable[[CommandShape, str, str], Words]  # (shape, the word as typed, value)


def _not_an_option(shape: CommandShape, flag: str, why: str = "") -> UsageError:
    tail = f": {why}" if why else f"; see hyops {shape.path} --help"
    return UsageError(f"{flag} is not an option of hyops {shape.path}{tail}")


def _to_option(*options: str, why: str = "") -> Callable[[CommandShape, str, str], Words]:
    """The first of `options` the command declares, with the value when the habit has one."""

    def translate(shape: CommandShape, word: str, value: str) -> Words:
        flag, eq, _ = word.partition("=")
        for option in options:
            if not shape.has(option):
                continue
            if option in shape.takes_value:
                return Words((option, value))
            if not eq:
                return Words((option,))
            on = _go_bool(value)  # `-json=true`: a flag hyops's option has off by default
            if on is None:
                raise UsageError(f"{word}: use {option} (or leave it out)")
            return Words((option,) if on else ())
        raise _not_an_option(shape, flag, why)

    return translate


def _to_engine(shape: CommandShape, word: str, value: str) -> Words:
    """An engine-only flag: after `--`, as `-flag=value`, where the command passes any."""
    flag = word.partition("=")[0]
    if shape.passthrough:
        return Words(engine=(f"{flag}={value}" if value or "=" in word else flag,))
    own = f"-{flag}"
    why = f"it is an engine flag, and hyops {shape.path} passes none to the engine"
    if shape.has(own):
        why += f" (its own {own} means something else: see hyops {shape.path} --help)"
    raise _not_an_option(shape, flag, why)


def _lock_timeout(shape: CommandShape, word: str, value: str) -> Words:
    """hyops's own --lock-timeout where the command has one (the module lock; plan passes it
    on to the engine's state lock); else the engine's, where the command passes flags."""
    seconds = duration_seconds(value)
    if seconds is None:
        raise UsageError(f"-lock-timeout {value!r} is not a duration: use --lock-timeout SECONDS "
                         "(e.g. --lock-timeout 10)")
    if shape.has("--lock-timeout"):
        return Words(("--lock-timeout", _number(seconds)))
    if shape.passthrough:
        return Words(engine=(f"-lock-timeout={value}",))
    raise _not_an_option(shape, "-lock-timeout", "it takes no lock")


def _input(shape: CommandShape, word: str, value: str) -> Words:
    """hyops always runs the engine with -input=false: saying so again is fine."""
    if _go_bool(value if "=" in word else "true") is False:
        return Words()
    raise UsageError(f"{word} is not possible: hyops never lets the engine prompt (it runs it with "
                     "-input=false); give inputs with --var NAME=VALUE or --inputs FILE")


def _no_color(shape: CommandShape, word: str, value: str) -> Words:
    """hyops runs the engine with -json or -no-color and prints its own lines without colour
    (render.py): nothing to turn off, unless the command grows a --no-color of its own."""
    return Words(("--no-color",)) if shape.has("--no-color") else Words()


def _json(shape: CommandShape, word: str, value: str) -> Words:
    if shape.has("--json"):
        return Words(("--json",))
    if shape.passthrough:
        raise _not_an_option(shape, "-json", "hyops runs the engine with -json already and keeps "
                                             "its events in the run folder (events.jsonl)")
    raise _not_an_option(shape, "-json")


def _chdir(shape: CommandShape, word: str, value: str) -> Words:
    raise UsageError("-chdir is not needed: pass the module directory as the argument")


_NO_INPUTS = "it takes no inputs on the command line"
_HABITS: tuple[Habit, ...] = (
    Habit("-var", True, "name=value", _to_option("--var", why=_NO_INPUTS)),
    Habit("-var-file", True, "dev.tfvars", _to_option("--var-file", "--inputs", why=_NO_INPUTS)),
    Habit("-auto-approve", False, "", _to_option(
        "--auto-approve", why="it never asks for approval, so there is nothing to approve")),
    Habit("-lock-timeout", True, "10s", _lock_timeout),
    Habit("-parallelism", True, "2", _to_engine),
    Habit("-target", True, "sim_vm.a", _to_engine),
    Habit("-replace", True, "sim_vm.a", _to_engine),
    Habit("-refresh", False, "", _to_engine),
    Habit("-lock", False, "", _to_engine),
    Habit("-input", False, "", _input),
    Habit("-no-color", False, "", _no_color),
    Habit("-chdir", False, "DIR", _chdir),
    Habit("-json", False, "", _json),
    Habit("-raw", False, "", _to_option("--raw")),
    Habit("-out", True, "plan.tfplan", _to_option("--out")),
    Habit("-detailed-exitcode", False, "", _to_option("--detailed-exitcode")),
)
HABITS: dict[str, Habit] = {h.flag: h for h in _HABITS}


# --- rewriting one command's arguments ------------------------------------------------------------


def translate(args: Sequence[str], shape: CommandShape) -> list[str]:
    """`args` (after the command path) with every single-dash engine habit before `--` made
    hyops's spelling, moved after `--`, dropped, or refused (UsageError naming the fix)."""
    own: list[str] = []
    engine: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            break
        flag, eq, value = word.partition("=")
        if word.startswith("--") or shape.has(flag) or not _single_dash_word(word):
            own.append(word)
            if shape.has(flag) and flag in shape.takes_value and not eq and i + 1 < len(args):
                i += 1
                own.append(args[i])  # a value, whatever it looks like
        else:
            habit = HABITS.get(flag)
            if habit is None:
                raise _unknown(shape, word)
            if habit.takes_value and not eq:
                if i + 1 >= len(args) or args[i + 1] == "--":
                    raise UsageError(f"{flag} needs a value, e.g. {flag} {habit.example}")
                i += 1
                value = args[i]
            words = habit.translate(shape, word, value)
            own += words.hyops
            engine += words.engine
        i += 1
    rest = list(args[i + 1:]) if i < len(args) else []
    if engine or i < len(args):
        return [*own, "--", *engine, *rest]
    return own


def hoist_globals(args: Sequence[str], shape: CommandShape,
                  global_options: frozenset[str]) -> tuple[list[str], list[str]]:
    """(global options with their values, the rest) of `args` before `--`: the global options
    that take a value and the command does not declare itself. One without its value stays
    (Click then names it), so the command name is never taken for a value."""
    hoisted: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            rest += args[i:]
            break
        flag, eq, _ = word.partition("=")
        if flag in global_options and not shape.has(flag) and (eq or i + 1 < len(args)):
            hoisted += [word] if eq else [word, args[i + 1]]
            i += 1 if eq else 2
            continue
        rest.append(word)
        if shape.has(flag) and flag in shape.takes_value and not eq and i + 1 < len(args):
            i += 1
            rest.append(args[i])
        i += 1
    return hoisted, rest


def _single_dash_word(word: str) -> bool:
    """`-var`, `-lock=false`: one dash and a name (not `-h`, `-`, or a negative number)."""
    return re.match(r"-[A-Za-z][\w-]+(=|$)", word) is not None


def _unknown(shape: CommandShape, word: str) -> UsageError:
    flag = word.partition("=")[0]
    if shape.passthrough:
        return UsageError(f"{flag} is not a hyops option: engine flags go after --, e.g. "
                          f"hyops {shape.path} MODULE_DIR -- {word}")
    return _not_an_option(shape, flag)


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float | None:
    """Seconds of a Go duration as the engine takes it (`10s`, `1m30s`, `500ms`), or of a bare
    number of seconds (hyops's own spelling); None if it is neither."""
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d*)?|\.\d+", text):
        return float(text)
    if not text or _DURATION_PART.sub("", text):
        return None
    return sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(text))


def _number(seconds: float) -> str:
    return str(int(seconds)) if seconds.is_integer() else repr(seconds)


def _go_bool(text: str) -> bool | None:
    """strconv.ParseBool, as the engine reads `-input=...`."""
    return {"1": True, "t": True, "true": True, "0": False, "f": False, "false": False}.get(text.lower())


# --- the whole argv --------------------------------------------------------------------------------


def rewrite_argv(root: click.Group, ctx: click.Context, args: Sequence[str]) -> list[str]:
    """`hyops` argv (without the program name) as Click should parse it: global options found
    after the command path moved in front of it, the command's engine habits rewritten.
    Unchanged when no command is named (help, --version, a typo Click will report)."""
    root_shape = shape_of(root, "", ctx.help_option_names)
    global_options = frozenset(o for o in root_shape.takes_value if o.startswith("--"))
    words = list(args)
    cut = _option_prefix(words, root_shape, frozenset())
    head, rest = words[:cut], words[cut:]
    group: click.Group = root
    path: list[str] = []  # command names and each group's own options, as typed
    names: list[str] = []
    hoisted: list[str] = []
    while rest and rest[0] != "--":
        command = group.get_command(ctx, rest[0])
        if command is None:
            return words
        names.append(rest[0])
        shape = shape_of(command, " ".join(names), ctx.help_option_names)
        if not isinstance(command, click.Group):
            lifted, own = hoist_globals(rest[1:], shape, global_options)
            return [*head, *hoisted, *lifted, *path, rest[0], *translate(own, shape)]
        cut = 1 + _option_prefix(rest[1:], shape, global_options)
        lifted, own = hoist_globals(rest[1:cut], shape, global_options)
        hoisted += lifted
        path += [rest[0], *own]
        rest = rest[cut:]
        group = command
    return words


def _option_prefix(words: Sequence[str], shape: CommandShape, global_options: frozenset[str]) -> int:
    """How many leading words are options (of shape, or global ones) and their values: where a
    group's subcommand name is. `-chdir` there is refused with its hint."""
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "--":
        flag, eq, _ = words[i].partition("=")
        if flag == "-chdir":
            _chdir(shape, words[i], "")
        takes = flag in shape.takes_value or (flag in global_options and not shape.has(flag))
        i += 2 if takes and not eq else 1
    return i
