"""``lazy_dataclass`` makes what ``dataclass`` makes, on first use: the same class attributes,
fields, params, signature and behaviour (repr, equality, hashing, ordering, frozenness,
``replace``, ``asdict``, matching), completed by whichever of its placeholders is read first,
and safely when threads race to create the first instance."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import threading
from collections.abc import Callable
from dataclasses import KW_ONLY, InitVar, dataclass, field
from typing import Any, ClassVar

import pytest

from specwire.runtime.core.lazy_dataclass import complete, lazy_dataclass, pending_classes

PARAMS: list[dict[str, Any]] = [
    {},
    {"frozen": True},
    {"eq": False},
    {"order": True},
    {"unsafe_hash": True},
    {"frozen": True, "kw_only": True},
    {"match_args": False},
    {"init": False},
    {"repr": False, "frozen": True},
]


def make(decorator: Callable[..., Any], params: dict[str, Any]) -> type:
    """One class body with most kinds of field, decorated with ``decorator(**params)``."""

    class Sample:
        """A sample."""

        counted: ClassVar[int] = 0
        name: str = "n"
        size: int = 3
        tags: tuple[str, ...] = field(default=())
        notes: list[str] = field(default_factory=list, compare=False, hash=False)
        secret: str = field(default="s", repr=False)
        derived: int = field(default=0, init=False)
        _: KW_ONLY
        scale: InitVar[int] = 2

        def __post_init__(self, scale: int) -> None:
            object.__setattr__(self, "derived", self.size * scale)

        def label(self) -> str:
            return f"{self.name}:{self.size}"

    if params.get("init") is False:
        del Sample.__post_init__
    return decorator(**params)(Sample)  # type: ignore[no-any-return]


def attributes(cls: type) -> dict[str, Any]:
    return {
        name: value
        for name, value in vars(cls).items()
        if name not in ("__dict__", "__weakref__", "__slotnames__")
    }


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_the_completed_class_is_what_dataclass_makes(params: dict[str, Any]) -> None:
    eager = make(dataclass, params)
    lazy = make(lazy_dataclass, params)
    assert lazy in pending_classes()
    complete(lazy)
    assert lazy not in pending_classes()
    assert attributes(lazy).keys() == attributes(eager).keys()
    assert repr(lazy.__dataclass_params__) == repr(eager.__dataclass_params__)  # type: ignore[attr-defined]
    assert [repr(f) for f in dataclasses.fields(lazy)] == [
        repr(f) for f in dataclasses.fields(eager)
    ]
    assert str(inspect.signature(lazy)) == str(inspect.signature(eager))
    for name in ("__init__", "__repr__", "__eq__", "__setattr__", "__lt__"):
        if name in vars(eager):
            assert vars(lazy)[name].__qualname__ == vars(eager)[name].__qualname__
    assert getattr(lazy, "__match_args__", None) == getattr(eager, "__match_args__", None)
    assert lazy.__hash__ is None if eager.__hash__ is None else lazy.__hash__ is not None
    if params.get("init") is False:
        return
    first, second = lazy(name="a", size=2, scale=5), lazy(name="a", size=2, scale=5)
    twin = eager(name="a", size=2, scale=5)
    if params.get("repr", True):
        assert repr(first) == repr(twin)
    assert (first == second) == (twin == eager(name="a", size=2, scale=5))
    assert first.derived == twin.derived == 10
    if "__hash__" in vars(eager) and eager.__hash__ is not None:
        assert hash(first) == hash(second) == hash(twin)
    assert dataclasses.asdict(first) == dataclasses.asdict(twin)
    assert dataclasses.replace(first, size=4).size == 4
    if params.get("order"):
        assert (first < lazy(name="b", scale=1)) is (twin < eager(name="b", scale=1))
    if params.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            first.size = 9
        with pytest.raises(dataclasses.FrozenInstanceError):
            del first.size
    else:
        first.size = 9
        assert first.size == 9


@pytest.mark.parametrize(
    "touch",
    [
        lambda cls: cls(name="x"),
        lambda cls: dataclasses.fields(cls),
        lambda cls: dataclasses.is_dataclass(cls),
        lambda cls: inspect.signature(cls),
        lambda cls: cls.__match_args__,
        lambda cls: cls.__dataclass_params__,
        lambda cls: cls.__init__,
    ],
    ids=["call", "fields", "is_dataclass", "signature", "match_args", "params", "init"],
)
def test_any_placeholder_completes_the_class(touch: Callable[[type], Any]) -> None:
    cls = make(lazy_dataclass, {"frozen": True})
    assert cls in pending_classes()
    touch(cls)
    assert cls not in pending_classes()
    assert "__init__" in vars(cls) and "__repr__" in vars(cls)
    assert dataclasses.is_dataclass(cls)
    match cls(name="m", size=1):
        case cls(name, size):  # type: ignore[misc]
            assert (name, size) == ("m", 1)


def test_a_subclass_made_by_dataclass_completes_its_base_first() -> None:
    base = make(lazy_dataclass, {"frozen": True})

    @dataclass(frozen=True)
    class Child(base):  # type: ignore[misc, valid-type]
        """A child."""

        extra: int = 0

    assert base not in pending_classes()
    assert [f.name for f in dataclasses.fields(Child)][-1] == "extra"
    assert Child(name="c", extra=1).extra == 1


def test_threads_creating_the_first_instances_all_get_complete_ones() -> None:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for _ in range(20):
            cls = make(lazy_dataclass, {"frozen": True})
            made: list[Any] = []
            failed: list[BaseException] = []

            def create(cls: type = cls, made: list[Any] = made, failed: list[Any] = failed) -> None:
                try:
                    made.append(cls(name="t", size=1))
                except BaseException as exc:  # noqa: BLE001 - reported below
                    failed.append(exc)

            threads = [threading.Thread(target=create) for _ in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert failed == []
            assert len(made) == 6 and all(item == made[0] for item in made)
    finally:
        sys.setswitchinterval(previous)


def test_what_it_refuses() -> None:
    with pytest.raises(TypeError, match="slots"):
        lazy_dataclass(slots=True)

    class Undocumented:
        value: int = 0

    with pytest.raises(TypeError, match="docstring"):
        lazy_dataclass(Undocumented)

    class Base:
        """A base."""

    class Derived(Base):
        """Derived."""

        value: int = 0

    with pytest.raises(TypeError, match="base"):
        lazy_dataclass(frozen=True)(Derived)

    class OwnInit:
        """Makes its instances itself."""

        value: int = 0

        def __init__(self) -> None:
            self.value = 1

    with pytest.raises(TypeError, match="__init__"):
        lazy_dataclass(OwnInit)


def test_the_bare_decorator_form() -> None:
    @lazy_dataclass
    class Point:
        """A point."""

        x: int = 0

    assert Point in pending_classes()
    assert (
        Point(x=2) == Point(x=2)
        and repr(Point()) == "test_the_bare_decorator_form.<locals>.Point(x=0)"
    )
