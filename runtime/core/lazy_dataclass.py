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
placeholder left. A thread that creates an instance while another completes the class waits for it
(one lock; ``__init__`` is generated on a twin of the class and set last, so the class never lacks
one and no instance exists before its other methods do). Before the class is complete, a field's
default read on the class itself (``Cls.field``) is what the class body wrote (a ``field(...)`` is
still a ``Field``): nothing reads defaults that way. An instance made without ``__init__`` before
any other (unpickled in a new process, or ``object.__new__``) would not complete its class: the
runtime makes none.

Only for a class whose base is ``object`` (no inheritance), without ``slots=True`` or
``weakref_slot=True`` (those make a new class), with a docstring (``dataclass()`` would build
``__doc__`` from ``inspect.signature``, which reads ``__init__``), that defines none of
``__init__``, ``__new__``, ``__match_args__`` and the dataclass attributes. Type checkers see
``dataclasses.dataclass`` itself.

``lazy_methods_dataclass(...)`` is for a class that is instantiated early but seldom printed,
compared or hashed (a setting, a seam, a model request): ``dataclass()`` makes the class now
(``__init__``, the fields and params, a frozen class's ``__setattr__`` and ``__delattr__``,
slots), and the methods nothing calls before they are needed (``__repr__``, ``__eq__``, the
ordering methods, a generated ``__hash__``, ``__match_args__``) stand in as placeholders that
make all of them the first time one is read. Those are generated on a twin of the class made
from its original body (their code never names the class: ``self.__class__``) and set on the
class one by one, each replacing its placeholder, so no thread ever sees a class without them.
``__hash__ = None`` (``eq`` without ``frozen``) is set at once. The same limits on the class
(base ``object``, a docstring, none of those methods defined), except that ``slots=True`` is
allowed: the class is made now.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["complete", "lazy_dataclass", "lazy_methods_dataclass", "pending_classes"]

_T = TypeVar("_T", bound=type)

# The class attributes that stand in until the class is complete (see ``_complete``).
_PLACEHOLDERS = ("__init__", "__dataclass_fields__", "__dataclass_params__", "__match_args__")

# The methods ``lazy_methods_dataclass`` defers, when its arguments ask for them.
_ORDER = ("__lt__", "__le__", "__gt__", "__ge__")
_DEFERRED = ("__repr__", "__eq__", "__hash__", *_ORDER, "__match_args__")

# Classes decorated and not yet complete, with their ``dataclass()`` arguments (and, for a
# ``lazy_methods_dataclass``, its original body and the methods still to make). Guarded by
# ``_lock`` (re-entrant, so a placeholder read while completing cannot deadlock).
_pending: dict[type, dict[str, Any]] = {}
_pending_methods: dict[type, tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]] = {}
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


class _HashPlaceholder(_Placeholder):
    """A deferred ``__hash__``. Read on the class itself it stays a placeholder: ``dataclass()``
    reads ``type(default).__hash__`` of every field's default, to refuse an unhashable one, and
    a class whose instance is a default is not completed by that. Called, it completes."""

    __slots__ = ()

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None and (owner is None or owner is self.owner):
            with _lock:
                if self.owner in _pending_methods:
                    return self
        return super().__get__(instance, owner)

    def __call__(self, instance: object) -> int:
        complete(self.owner)
        found: Callable[[object], int] = self.owner.__dict__["__hash__"]
        return found(instance)


def complete(cls: type) -> None:
    """Generate ``cls``'s dataclass methods now, if they are not yet (idempotent)."""
    with _lock:
        deferred = _pending_methods.pop(cls, None)
        if deferred is not None:
            try:
                _complete_methods(cls, *deferred)
            except BaseException:
                _pending_methods[cls] = deferred  # its placeholders stay: the next use retries
                raise
            return
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
    # body, nothing else) and replaces its placeholder in one step, once ``dataclass()`` has
    # made the rest on the class itself (without ``__init__``; its params are then told the
    # truth). Until that step another thread's instance waits at the placeholder: set first,
    # an instance made meanwhile had no ``__eq__``, ``__hash__`` or ``__repr__`` yet (hashed by
    # identity, a dict key no equal instance found again).
    # ``__match_args__`` is added only when the class has none, so its placeholder goes first
    # (no instance exists yet to be matched). The fields and params placeholders are
    # overwritten by ``dataclass()``.
    init = params.get("init", True)
    made_init = None
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
        made_init = twin.__dict__["__init__"]
    if isinstance(cls.__dict__.get("__match_args__"), _Placeholder):
        delattr(cls, "__match_args__")
    dataclasses.dataclass(cls, **{**params, "init": False})
    if made_init is not None:
        cls.__dataclass_params__.init = True  # type: ignore[attr-defined]
        cls.__init__ = made_init  # type: ignore[misc]


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


def _lazy_methods(**params: Any) -> Callable[[_T], _T]:
    def wrap(cls: _T) -> _T:
        if cls.__bases__ != (object,):
            raise TypeError(f"lazy_methods_dataclass: {cls.__qualname__} has a base; use dataclass")
        if not cls.__dict__.get("__doc__"):
            raise TypeError(f"lazy_methods_dataclass: {cls.__qualname__} needs a docstring")
        defined = [name for name in _DEFERRED if name in cls.__dict__]
        if defined:
            raise TypeError(f"lazy_methods_dataclass: {cls.__qualname__} defines {defined[0]}")
        body = {
            name: value
            for name, value in cls.__dict__.items()
            if name not in ("__dict__", "__weakref__")
        }
        eq = params.get("eq", True)
        frozen = params.get("frozen", False)
        unsafe_hash = params.get("unsafe_hash", False)
        made: _T = dataclasses.dataclass(  # type: ignore[assignment]
            cls,
            **{
                **params,
                "repr": False,
                "eq": False,
                "order": False,
                "unsafe_hash": False,
                "match_args": False,
            },
        )
        told = made.__dataclass_params__  # type: ignore[attr-defined]
        told.repr = params.get("repr", True)
        told.eq = eq
        told.order = params.get("order", False)
        told.unsafe_hash = unsafe_hash
        later = [
            name
            for name, wanted in (
                ("__repr__", told.repr),
                ("__eq__", eq),
                ("__hash__", unsafe_hash or (eq and frozen)),
                *((name, told.order) for name in _ORDER),
                ("__match_args__", params.get("match_args", True)),
            )
            if wanted
        ]
        if eq and not frozen and not unsafe_hash:
            made.__hash__ = None  # type: ignore[assignment]
        if later:
            with _lock:
                _pending_methods[made] = (params, body, tuple(later))
                for name in later:
                    kind = _HashPlaceholder if name == "__hash__" else _Placeholder
                    setattr(made, name, kind(made, name))
        return made

    return wrap


def _complete_methods(
    cls: type, params: dict[str, Any], body: dict[str, Any], names: tuple[str, ...]
) -> None:
    # The twin's methods read the class through ``self.__class__`` only, so they are the class's
    # own; its hash is the one ``dataclass()`` adds to a frozen class with ``eq``.
    eq = params.get("eq", True)
    twin: type = dataclasses.dataclass(
        type(cls.__name__, (object,), {**body, "__qualname__": cls.__qualname__}),
        init=False,
        repr=params.get("repr", True),
        eq=eq,
        order=params.get("order", False),
        unsafe_hash=params.get("unsafe_hash", False) or (eq and params.get("frozen", False)),
        frozen=False,
        match_args=params.get("match_args", True),
        kw_only=params.get("kw_only", False),
    )
    for name in names:
        setattr(cls, name, twin.__dict__[name])


if TYPE_CHECKING:
    from dataclasses import dataclass as lazy_dataclass
    from dataclasses import dataclass as lazy_methods_dataclass
else:

    def lazy_dataclass(cls: type | None = None, /, **params: Any) -> Any:
        """``@lazy_dataclass`` or ``@lazy_dataclass(frozen=True, ...)``: ``dataclass``'s
        arguments."""
        if cls is None:
            return _lazy(**params)
        return _lazy(**params)(cls)

    def lazy_methods_dataclass(cls: type | None = None, /, **params: Any) -> Any:
        """``@lazy_methods_dataclass`` or ``@lazy_methods_dataclass(frozen=True, ...)``:
        ``dataclass``'s arguments."""
        if cls is None:
            return _lazy_methods(**params)
        return _lazy_methods(**params)(cls)


def pending_classes() -> list[type]:
    """The classes decorated and not yet complete (for the tests)."""
    with _lock:
        return [*_pending, *_pending_methods]
