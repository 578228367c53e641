"""base/lazy_dataclass.py's `dataclass` behaves as the standard library's (issue 58, item 2): each
case below is built twice, once with each decorator, and must be observed alike; and every class
of the package built with it gets the `__init__` the standard library would write."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from dataclasses import FrozenInstanceError, field
from typing import Any

import pytest

import hybridops_tf
from hybridops_tf.base.lazy_dataclass import _init
from hybridops_tf.base.lazy_dataclass import dataclass as lazy


def _cases(dc: Any) -> dict[str, type]:
    @dc(frozen=True, slots=True)
    class FrozenSlots:
        x: int
        y: list[int] = field(default_factory=list)
        z: int = field(default=7, init=False)

    @dc(frozen=True)
    class Frozen:
        x: int
        z: str = "z"
        w: list[int] = field(default_factory=list, init=False, compare=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "z", self.z + "!")

    @dc
    class Plain:
        x: int
        y: dict[str, int] = field(default_factory=dict)
        hidden: int = field(default=0, repr=False)

    @dc(frozen=True, slots=True, kw_only=True)
    class KwOnly:
        a: int
        b: int = 2

    @dc(frozen=True)
    class Base:
        kind: str

    @dc(frozen=True)
    class Sub(Base):
        extra: int = 0
        late: int = field(default=1, kw_only=True)

    @dc(frozen=True)
    class OwnEq:
        x: int

        def __eq__(self, other: object) -> bool:
            return isinstance(other, OwnEq)

    @dc(slots=True)
    class Slotted:
        x: int
        n: int = field(default=3, init=False)

    return {c.__name__: c for c in (FrozenSlots, Frozen, Plain, KwOnly, Base, Sub, OwnEq, Slotted)}


def _observe(c: dict[str, type]) -> list[object]:
    """What a caller can see of the cases, as plain values (never the classes themselves)."""
    seen: list[object] = []

    def attempt(fn: Any) -> object:
        try:
            return ("ok", fn())
        except (TypeError, AttributeError, FrozenInstanceError) as err:
            return (type(err).__name__, str(err).split(".")[-1])

    def assign(obj: object, name: str) -> object:
        return attempt(lambda: setattr(obj, name, 1))

    fs = c["FrozenSlots"](1)
    seen += [repr(fs), fs == c["FrozenSlots"](1), fs == c["FrozenSlots"](2), fs != c["FrozenSlots"](1),
             hash(c["FrozenSlots"](1, (1,))) == hash(c["FrozenSlots"](1, (1,))),  # type: ignore[arg-type]
             dataclasses.asdict(fs), repr(dataclasses.replace(fs, x=3)), assign(fs, "x"),
             # a new name on a frozen slotted instance: the standard library (3.11) fails with a TypeError
             # from its own super() call, this one says FrozenInstanceError; both refuse
             assign(fs, "other")[0] != "ok",
             attempt(lambda: delattr(fs, "x")), repr(copy.copy(fs)), repr(copy.deepcopy(fs)), fs.z,
             c["FrozenSlots"].__slots__, c["FrozenSlots"].__match_args__, attempt(lambda: c["FrozenSlots"]())]
    fr = c["Frozen"](1)
    seen += [repr(fr), fr.z, fr.w, repr(copy.deepcopy(fr)), hash(fr) == hash(c["Frozen"](1)), assign(fr, "other"),
             fr == c["Frozen"](1), repr(dataclasses.replace(fr, z="q"))]
    pl = c["Plain"](1)
    pl.x = 5
    seen += [repr(pl), c["Plain"].__hash__ is None, pl == c["Plain"](5), pl == c["Plain"](5, hidden=1),
             [f.name for f in dataclasses.fields(pl)], dataclasses.astuple(pl)]
    seen += [repr(c["KwOnly"](a=1)), attempt(lambda: c["KwOnly"](1)), c["KwOnly"].__match_args__]
    sub = c["Sub"]("k", 1, late=2)
    seen += [repr(sub), [f.name for f in dataclasses.fields(sub)], sub == c["Sub"]("k", 1, late=2),
             c["Sub"]("k") == c["Base"]("k"), assign(sub, "kind"), isinstance(sub, c["Base"])]
    seen += [c["OwnEq"](1) == c["OwnEq"](2), hash(c["OwnEq"](1)) == hash(c["OwnEq"](1))]
    sl = c["Slotted"](1)
    sl.x = 2
    seen += [repr(sl), sl.n, attempt(lambda: setattr(sl, "other", 1))]
    seen += [str(inspect.signature(c[name].__init__)) for name in sorted(c)]
    seen += [c[name].__doc__ for name in sorted(c)]
    return seen


@pytest.mark.parametrize("index", range(len(_observe(_cases(dataclasses.dataclass)))))
def test_a_lazily_built_dataclass_is_observed_as_the_standard_one(index: int) -> None:
    assert _observe(_cases(lazy))[index] == _observe(_cases(dataclasses.dataclass))[index]


@lazy(frozen=True, slots=True)
class Pickled:
    name: str
    items: tuple[int, ...] = ()


@lazy(frozen=True)
class PickledDict:
    name: str


def test_frozen_lazily_built_dataclasses_pickle_and_copy_back_equal() -> None:
    for obj in (Pickled("a", (1, 2)), PickledDict("b")):
        assert pickle.loads(pickle.dumps(obj)) == obj
        assert copy.deepcopy(obj) == obj


def test_a_frozen_lazily_built_class_refuses_a_new_attribute_as_the_standard_one_does() -> None:
    with pytest.raises(FrozenInstanceError):
        PickledDict("b").other = 1  # type: ignore[attr-defined]


def test_inheriting_frozen_from_non_frozen_is_refused_at_import_as_the_standard_library_does() -> None:
    @lazy
    class Loose:
        x: int

    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        @lazy(frozen=True)
        class Stiff(Loose):
            y: int = 0


def _package_classes() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(hybridops_tf.__path__, "hybridops_tf."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an extra not installed
            continue
        for value in vars(module).values():
            if isinstance(value, type) and "__lazy_flags__" in value.__dict__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


PACKAGE = _package_classes()


def test_the_package_builds_its_hot_types_lazily() -> None:
    names = {c.__qualname__ for c in PACKAGE}
    assert {"OperationRecord", "StateStamp", "ChangeSummary", "Settings"} <= names


@pytest.mark.parametrize("cls", PACKAGE, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_each_package_class_gets_the_init_the_standard_library_writes(cls: type) -> None:
    fields = dataclasses.fields(cls)
    frozen = bool(cls.__dict__["__lazy_flags__"])
    stand_in = dataclasses.make_dataclass(cls.__name__, [(f.name, f.type, dataclasses.field(
        default=f.default, default_factory=f.default_factory, init=f.init, kw_only=f.kw_only)) for f in fields],
        frozen=frozen, namespace={"__doc__": "x"})
    instance_init = cls.__init__  # the stub until the first instance, then the written one

    assert str(inspect.signature(_init(cls, frozen))) == str(inspect.signature(stand_in.__init__))
    assert instance_init.__qualname__ == f"{cls.__qualname__}.__init__"
    if cls.__doc__ and cls.__doc__.startswith(f"{cls.__name__}("):  # none of its own: the standard one
        documented = dataclasses.make_dataclass(cls.__name__, [(f.name, f.type, dataclasses.field(
            default=f.default, default_factory=f.default_factory, init=f.init, kw_only=f.kw_only)) for f in fields],
            frozen=frozen)
        assert cls.__doc__ == documented.__doc__
