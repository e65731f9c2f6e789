"""``lazy_dataclass``: a dataclass whose methods are generated the first time the class is used.

``dataclasses.dataclass`` compiles each generated method (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, a frozen class's ``__setattr__`` and ``__delattr__``) from source when the class is
created: about half a millisecond per class, and a memory bundle imports a hundred dataclasses
before its first answer, most of which that answer never instantiates (a plan, a quarantined
fact, a tool-call event). ``@lazy_dataclass(...)`` takes the same arguments and makes the same
class, only later: it puts placeholders on the class and calls ``dataclasses.dataclass`` on it,
in place, the first time one of them is read:

- ``__init__``: an instance is made through it (a call, ``dataclasses.replace``), so no instance
  exists before the class is complete, and ``inspect.signature`` sees the real one;
- ``__dataclass_fields__`` and ``__dataclass_params__``: ``dataclasses.fields``,
  ``is_dataclass``, ``asdict`` and a subclass's own processing see the complete class;
- ``__match_args__``.

Once complete, the class is what ``@dataclass`` would have made: the same attributes, and no
placeholder left. A thread that creates an instance while another completes the class waits
for it (one lock; ``__init__`` is generated first, on a twin of the class, so the class never
lacks one). Before the class is complete, a field's default read on the class itself
(``Cls.field``) is what the class body wrote (a ``field(...)`` is still a ``Field``): nothing
reads defaults that way. An instance made without ``__init__`` before any other (unpickled in
a new process, or ``object.__new__``) would not complete its class: the runtime makes none.

Only for a class whose base is ``object`` (no inheritance), without ``slots=True`` or
``weakref_slot=True`` (those make a new class), with a docstring (``dataclass()`` would build
``__doc__`` from ``inspect.signature``, which reads ``__init__``), that defines none of
``__init__``, ``__new__``, ``__match_args__`` and the dataclass attributes. Type checkers see
``dataclasses.dataclass`` itself.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["complete", "lazy_dataclass", "pending_classes"]

_T = TypeVar("_T", bound=type)

# The class attributes that stand in until the class is complete (see ``_complete``).
_PLACEHOLDERS = ("__init__", "__dataclass_fields__", "__dataclass_params__", "__match_args__")

# Classes decorated and not yet complete, with their ``dataclass()`` arguments. Guarded by
# ``_lock`` (re-entrant, so a placeholder read while completing cannot deadlock).
_pending: dict[type, dict[str, Any]] = {}
_lock = threading.RLock()


class _Placeholder:
    """A class attribute that completes its class when read, then reads the real attribute."""

    __slots__ = ("owner", "name")

    def __init__(self, owner: type, name: str) -> None:
        self.owner = owner
        self.name = name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        complete(self.owner)
        if instance is not None:
            return getattr(instance, self.name)
        return getattr(owner if owner is not None else self.owner, self.name)


def complete(cls: type) -> None:
    """Generate ``cls``'s dataclass methods now, if they are not yet (idempotent)."""
    with _lock:
        params = _pending.pop(cls, None)
        if params is None:
            return
        try:
            _complete(cls, params)
        finally:
            for name in _PLACEHOLDERS:
                if isinstance(cls.__dict__.get(name), _Placeholder):
                    delattr(cls, name)


def _complete(cls: type, params: dict[str, Any]) -> None:
    # ``__init__`` is never missing from the class, or another thread creating an instance
    # meanwhile would get ``object.__init__``: it is generated on a twin of the class (the same
    # body, nothing else) and replaces its placeholder in one step; ``dataclass()`` then makes
    # the rest on the class itself, without ``__init__``, and its params are told the truth.
    # ``__match_args__`` is added only when the class has none, so its placeholder goes first
    # (no instance exists yet to be matched). The fields and params placeholders are
    # overwritten by ``dataclass()``.
    init = params.get("init", True)
    if init:
        body = {
            name: value
            for name, value in cls.__dict__.items()
            if name not in ("__dict__", "__weakref__") and not isinstance(value, _Placeholder)
        }
        body["__qualname__"] = cls.__qualname__
        twin: type = dataclasses.dataclass(
            type(cls.__name__, (object,), body),
            init=True,
            repr=False,
            eq=False,
            frozen=params.get("frozen", False),
            match_args=False,
            kw_only=params.get("kw_only", False),
        )
        cls.__init__ = twin.__dict__["__init__"]  # type: ignore[misc]
    if isinstance(cls.__dict__.get("__match_args__"), _Placeholder):
        delattr(cls, "__match_args__")
    dataclasses.dataclass(cls, **{**params, "init": False})
    if init:
        cls.__dataclass_params__.init = True  # type: ignore[attr-defined]


def _lazy(**params: Any) -> Callable[[_T], _T]:
    if params.get("slots") or params.get("weakref_slot"):
        raise TypeError("lazy_dataclass: slots=True makes a new class; use dataclass")

    def wrap(cls: _T) -> _T:
        if cls.__bases__ != (object,):
            raise TypeError(f"lazy_dataclass: {cls.__qualname__} has a base; use dataclass")
        if not cls.__dict__.get("__doc__"):
            raise TypeError(f"lazy_dataclass: {cls.__qualname__} needs a docstring")
        defined = [name for name in (*_PLACEHOLDERS, "__new__") if name in cls.__dict__]
        if defined:
            # Its own __init__ would make instances without completing the class.
            raise TypeError(f"lazy_dataclass: {cls.__qualname__} defines {defined[0]}")
        with _lock:
            _pending[cls] = params
            for name in _PLACEHOLDERS:
                if name not in cls.__dict__:
                    setattr(cls, name, _Placeholder(cls, name))
        return cls

    return wrap


if TYPE_CHECKING:
    from dataclasses import dataclass as lazy_dataclass
else:

    def lazy_dataclass(cls: type | None = None, /, **params: Any) -> Any:
        """``@lazy_dataclass`` or ``@lazy_dataclass(frozen=True, ...)``: ``dataclass``'s
        arguments."""
        if cls is None:
            return _lazy(**params)
        return _lazy(**params)(cls)


def pending_classes() -> list[type]:
    """The classes decorated and not yet complete (for the tests)."""
    with _lock:
        return list(_pending)
