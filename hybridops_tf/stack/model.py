"""The stack model (docs/contract.md: Stacks): a validated `stack.yml` as typed, frozen values.

`load_stack` is the only way to build one (the rules are in loader.py), so code that
receives a Stack may rely on it: names unique, no cycles, every path a module directory
inside the stack file's directory, every wire naming a declared output of an upstream
listed in depends_on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridops_tf.record.address import ModuleTarget

DEFAULT_STACK_FILE = "stack.yml"


@dataclass(frozen=True, slots=True)
class Wire:
    """`inputs_from: {input: "upstream.output"}`: one output feeding one input."""

    upstream: str
    output: str
    sensitive: bool = False  # the upstream declares the output sensitive: never on disk

    def __str__(self) -> str:
        return f"{self.upstream}.{self.output}"


@dataclass(frozen=True)
class Member:
    """One module of a stack, validated: its directory exists and its wiring fits its HCL."""

    name: str
    directory: Path  # absolute, symlinks resolved, inside the stack file's directory
    module_ref: str
    depends_on: tuple[str, ...] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict)
    inputs_from: Mapping[str, Wire] = field(default_factory=dict)
    owned_by: str | None = None
    retain_on_destroy: bool = False
    workspace: str | None = None

    @property
    def target(self) -> ModuleTarget:
        return ModuleTarget(self.directory, self.module_ref)

    @property
    def key(self) -> str:
        """Its record key: the ref, plus `@workspace` outside the default workspace."""
        from hybridops_tf.record.address import record_key

        return record_key(self.module_ref, self.workspace)


@dataclass(frozen=True)
class Stack:
    """A validated stack: members in file order, an acyclic `depends_on` graph."""

    name: str
    file: Path
    members: tuple[Member, ...]
    # read-only loads: "member x: 'token'" for required inputs no source here sets (loader.load_stack)
    unresolved: tuple[str, ...] = ()

    def member(self, name: str) -> Member:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.members]

    def dependencies(self) -> dict[str, tuple[str, ...]]:
        """name -> the members it depends on (apply order)."""
        return {m.name: m.depends_on for m in self.members}
