"""`dataclass` as the standard library's, with the methods it writes compiled when first used.

Why (issue 58, item 2): `dataclasses.dataclass` compiles each class's `__init__`, `__repr__`,
`__eq__`, `__hash__` and, when frozen, `__setattr__`/`__delattr__` from source text with `exec`
as the class is built: ~0.1 ms a method, ~4 methods a class, ~85 classes on a no-op apply, most
of which build no instance and none of which is compared, hashed or printed there. Here the
standard decorator does what costs nothing (the fields, `__match_args__`, the slots), the
frozen guard is one shared closure, and each other method is a stub that has the standard
library write the real one (for a stand-in class of the same fields and flags) on its first call,
puts it on the class and runs it. So `dataclasses.fields/replace/asdict`, equality, hashing,
immutability, `repr`, pickling and copying behave as the standard decorator's.

`order`, `unsafe_hash` or a method turned off (none used here) go to the standard decorator
unchanged. A class built here records its flags in `__lazy_flags__`;
its `__dataclass_params__` says what the standard decorator was asked (no init, repr, eq or
frozen), so a subclass is built with this decorator too (a standard frozen subclass of it is
refused at import by the standard library).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T", bound=type)
_FLAGS = "__lazy_flags__"


@overload
def dataclass(cls: _T, /) -> _T: ...


@overload
def dataclass(*, init: bool = True, repr: bool = True, eq: bool = True, order: bool = False,  # noqa: A002
              unsafe_hash: bool = False, frozen: bool = False, match_args: bool = True, kw_only: bool = False,
              slots: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(cls: Any = None, /, *, init: bool = True, repr: bool = True, eq: bool = True,  # noqa: A002
              order: bool = False, unsafe_hash: bool = False, frozen: bool = False, match_args: bool = True,
              kw_only: bool = False, slots: bool = False) -> Any:
    """`dataclasses.dataclass` with the same arguments; see the module's docstring."""

    def wrap(cls: type) -> type:
        if order or unsafe_hash or not (init and repr and eq):
            return dataclasses.dataclass(cls, init=init, repr=repr, eq=eq, order=order, unsafe_hash=unsafe_hash,
                                         frozen=frozen, match_args=match_args, kw_only=kw_only, slots=slots)
        return _build(cls, frozen=frozen, match_args=match_args, kw_only=kw_only, slots=slots)

    return wrap if cls is None else wrap(cls)


def _build(cls: type, *, frozen: bool, match_args: bool, kw_only: bool, slots: bool) -> type:
    for base in cls.__mro__[1:]:
        if hasattr(base, "__dataclass_fields__") and _frozen(base) != frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one" if frozen
                            else "cannot inherit non-frozen dataclass from a frozen one")
    own = dict(cls.__dict__)
    explicit_hash = own.get("__hash__", dataclasses.MISSING)
    has_explicit_hash = not (explicit_hash is dataclasses.MISSING or (explicit_hash is None and "__eq__" in own))
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"Cannot overwrite attribute __setattr__ or __delattr__ in class {cls.__name__}")
    undocumented = not cls.__doc__
    if undocumented:  # the standard decorator would write one now from __init__'s signature
        cls.__doc__ = cls.__name__
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False, match_args=match_args,
                                kw_only=kw_only, slots=slots)
    if undocumented:
        cls.__doc__ = _Doc(frozen)  # type: ignore[assignment]
    setattr(cls, _FLAGS, frozen)
    for name in ("__init__", "__repr__", "__eq__"):
        if name not in own:
            setattr(cls, name, _stub(cls, name, frozen))
    if not has_explicit_hash:
        # the standard decorator's table for eq=True: frozen -> a hash of the fields, else unhashable
        for name in ("__hash__",):
            setattr(cls, name, _stub(cls, name, frozen) if frozen else None)
    if frozen:
        _guard(cls, slots)
    return cls


class _Doc:
    """The docstring the standard decorator gives a class without one (its name and its
    `__init__`'s signature), written when read."""

    def __init__(self, frozen: bool) -> None:
        self.frozen = frozen

    def __get__(self, instance: object, owner: type) -> str:
        import inspect  # loaded by dataclasses already

        signature = inspect.signature(_init(owner, self.frozen))
        signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        return owner.__name__ + str(signature).replace(" -> None", "")


def _frozen(cls: type) -> bool:
    flag = getattr(cls, _FLAGS, None)
    return bool(cls.__dataclass_params__.frozen if flag is None else flag)  # type: ignore[attr-defined]


def _stub(owner: type, name: str, frozen: bool) -> Callable[..., Any]:
    """A method that has the standard library write `owner`'s real one, installs it and calls it."""

    def first_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        real = _written(owner, name, frozen)
        setattr(owner, name, real)
        return real(self, *args, **kwargs)

    first_call.__name__ = name
    first_call.__qualname__ = f"{owner.__qualname__}.{name}"
    return first_call


def _written(owner: type, name: str, frozen: bool) -> Callable[..., Any]:
    """`owner`'s real `name`: `__init__` written here as the standard library writes it; the
    others the standard library's own, for a stand-in class with `owner`'s fields (they read only
    `self` and the fields' names and flags)."""
    if name == "__init__":
        method = _init(owner, frozen)
    else:
        specs = {f.name: dataclasses.field(default=f.default, default_factory=f.default_factory, init=f.init,
                                           repr=f.repr, hash=f.hash, compare=f.compare, metadata=f.metadata,
                                           kw_only=f.kw_only)
                 for f in dataclasses.fields(owner)}
        # a docstring, or the standard library computes one from the signature
        namespace = {**specs, "__annotations__": {f: owner.__dataclass_fields__[f].type for f in specs},  # type: ignore[attr-defined]
                     "__doc__": owner.__doc__ or owner.__name__}
        flags = {"__repr__": {"repr": True}, "__eq__": {"eq": True}, "__hash__": {"unsafe_hash": True}}[name]
        stand_in: type = dataclasses.dataclass(type(owner.__name__, (), namespace),
                                         **{"init": False, "repr": False, "eq": False, **flags})
        method = stand_in.__dict__[name]
    method.__qualname__ = f"{owner.__qualname__}.{name}"
    return method


class _Factory:
    """The default of a parameter whose field has a default_factory (shown as dataclasses shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _init(owner: type, frozen: bool) -> Callable[..., Any]:
    """`__init__` as dataclasses (3.11-3.13) writes it: parameters in field order, keyword-only
    fields after `*`, a factory called when its parameter is not given, a field with init=False
    set from its factory (or, with slots, its default), frozen fields set through
    object.__setattr__, then `__post_init__` if the class has one."""
    names: dict[str, Any] = {"__dataclass_factory__": _FACTORY, "__dataclass_setattr__": object.__setattr__,
                             "__dataclass_return__": None}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    after_default = None
    fields = dataclasses.fields(owner)
    slots = "__slots__" in owner.__dict__
    me = "__dataclass_self__" if "self" in {f.name for f in fields} else "self"
    for i, f in enumerate(fields):
        kind, default = f"__dataclass_type_{i}__", f"__dataclass_default_{i}__"
        names[kind] = f.type
        value: str | None = f.name
        if f.default_factory is not dataclasses.MISSING:
            names[default] = f.default_factory
            value = f"{default}() if {f.name} is __dataclass_factory__ else {f.name}" if f.init else f"{default}()"
            param = f"{f.name}: {kind} = __dataclass_factory__"
        elif f.default is not dataclasses.MISSING:
            names[default] = f.default
            param = f"{f.name}: {kind} = {default}"
            if not f.init:
                value = default if slots else None
        else:
            param = f"{f.name}: {kind}"
            value = f.name if f.init else None
        if f.init:
            if f.kw_only:
                keyword.append(param)
            elif "=" in param:
                after_default = after_default or f.name
                positional.append(param)
            elif after_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            else:
                positional.append(param)
        if value is not None:
            body.append(f"__dataclass_setattr__({me}, {f.name!r}, {value})" if frozen else f"{me}.{f.name} = {value}")
    if hasattr(owner, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    params = ", ".join([me, *positional, *(["*", *keyword] if keyword else [])])
    lines = [f"def __init__({params}) -> __dataclass_return__:", *(f"    {line}" for line in body or ["pass"])]
    source = "\n".join(lines) + "\n"
    # what dataclasses does, once per class (here on its first instance); not inheriting this
    # module's `from __future__ import annotations`, so the annotations are the fields' own
    exec(compile(source, f"<{owner.__qualname__}.__init__>", "exec", dont_inherit=True), names)  # noqa: S102
    init: Callable[..., Any] = names["__init__"]
    return init


def _guard(cls: type, slots: bool) -> None:
    """The frozen guard of the standard library (3.11-3.13): a field, or any name on the class
    itself, cannot be set or deleted; a subclass's own names can. With slots, pickling and copying
    set the fields through object.__setattr__, as the standard library's __setstate__ does."""
    names = frozenset(f.name for f in dataclasses.fields(cls))
    this: Any = cls  # the class itself: `super(this, self)` is the next class after it, as dataclasses does

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(this, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(this, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
        setattr(cls, fn.__name__, fn)
    if slots:
        def __getstate__(self: Any) -> list[Any]:
            return [getattr(self, f.name) for f in dataclasses.fields(self)]

        def __setstate__(self: Any, state: list[Any]) -> None:
            for f, value in zip(dataclasses.fields(self), state, strict=False):
                object.__setattr__(self, f.name, value)

        for state in (__getstate__, __setstate__):
            setattr(cls, state.__name__, state)
