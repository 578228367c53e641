"""The plugin protocol on the wire: the generated tfplugin6 messages, values and diagnostics.

The messages are those PyPI's `pyvider` ships (tfplugin6_pb2.py: protocol 6 with resource
identity, list resources and actions, which the `tf` package's older copy lacks). Only that
one generated file is loaded, by its path: importing it through its package would first import
pyvider's framework (~590 modules, ~0.3 s), and the engine starts this provider three or four
times per apply. The generated file imports nothing but `google.protobuf`.

Values travel as msgpack DynamicValues; a value the engine does not know yet is msgpack
extension 0 (UNKNOWN here).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

SIM_PROTOCOL_PACKAGE = "pyvider"
_GENERATED = ("protocols", "tfprotov6", "protobuf", "tfplugin6_pb2.py")
_MODULE = "hybridops_tf.sim._tfplugin6_pb2"


class _Unknown:
    """A value the engine will know only after apply (msgpack extension 0)."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@cache
def pb() -> ModuleType:
    """The generated tfplugin6 module; ModuleNotFoundError (name `pyvider`) without the `[sim]` extra."""
    spec = importlib.util.find_spec(SIM_PROTOCOL_PACKAGE)  # finds, never imports, a top-level package
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location, *_GENERATED)
        if path.is_file():
            loader_spec = importlib.util.spec_from_file_location(_MODULE, path)
            assert loader_spec is not None and loader_spec.loader is not None
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[_MODULE] = module
            loader_spec.loader.exec_module(module)
            return module
    raise ModuleNotFoundError(f"No module named {SIM_PROTOCOL_PACKAGE!r} (its generated tfplugin6_pb2.py)",
                              name=SIM_PROTOCOL_PACKAGE)


def _ext_hook(code: int, data: bytes) -> Any:
    import msgpack

    return UNKNOWN if code == 0 else msgpack.ExtType(code, data)


def _default(value: Any) -> Any:
    import msgpack

    if value is UNKNOWN:
        return msgpack.ExtType(0, b"\x00")
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode(value: Any) -> Any:
    """A DynamicValue's content: None for an empty or null one."""
    import json

    import msgpack

    if value is None:
        return None
    if value.json:
        return json.loads(value.json)
    if value.msgpack:
        return msgpack.unpackb(value.msgpack, ext_hook=_ext_hook)
    return None


def encode(value: Any) -> Any:
    """A DynamicValue holding `value` (None: null)."""
    import msgpack

    return pb().DynamicValue(msgpack=msgpack.packb(value, default=_default))


def identity_data(identity: dict[str, Any] | None) -> Any:
    """A ResourceIdentityData, or None (the field left unset) for no identity."""
    return None if identity is None else pb().ResourceIdentityData(identity_data=encode(identity))


@dataclass(frozen=True, slots=True)
class Diagnostic:
    summary: str
    detail: str = ""
    path: tuple[str, ...] = ()
    error: bool = True


@dataclass(slots=True)
class Diagnostics:
    """What a call reports to the engine beside its answer."""

    items: list[Diagnostic] = field(default_factory=list)

    def add_error(self, summary: str, detail: str = "", path: list[str] | tuple[str, ...] = ()) -> Diagnostics:
        self.items.append(Diagnostic(summary, detail, tuple(path)))
        return self

    def has_errors(self) -> bool:
        return any(d.error for d in self.items)

    def to_pb(self) -> list[Any]:
        m = pb()
        out = []
        for d in self.items:
            fields: dict[str, Any] = {"severity": m.Diagnostic.ERROR if d.error else m.Diagnostic.WARNING,
                                      "summary": d.summary, "detail": d.detail}
            if d.path:
                fields["attribute"] = m.AttributePath(steps=[m.AttributePath.Step(attribute_name=p) for p in d.path])
            out.append(m.Diagnostic(**fields))
        return out
