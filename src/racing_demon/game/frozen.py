"""Frozen, slotted dataclasses built as fast as plain ones.

A frozen dataclass's generated ``__init__`` sets each field through ``object.__setattr__``
(its own ``__setattr__`` refuses), which costs twice what filling the slots through their
descriptors does. The engine builds a State for nearly every record of a replay, and a Seat
for most, so ``quick_init`` gives a class the faster ``__init__``; everything else (fields,
defaults, ``__post_init__``, equality, hashing, ``replace``) stays the dataclass's.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

_C = TypeVar("_C", bound=type)


def quick_init(cls: _C) -> _C:
    """``cls`` (a frozen, slotted dataclass; apply on top of ``@dataclass``) with an
    ``__init__`` of the same signature that fills the slots directly."""
    if not (dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    names: dict[str, Any] = {}
    arguments, body = [], []
    for number, field in enumerate(dataclasses.fields(cls)):
        if field.default_factory is not dataclasses.MISSING or field.kw_only:
            raise TypeError(f"{cls.__name__}.{field.name}: only plain defaults are supported")
        setter, default = f"_set{number}", f"_default{number}"
        names[setter] = cls.__dict__[field.name].__set__  # the slot's member descriptor
        names[default] = field.default
        if not field.init:
            if field.default is dataclasses.MISSING:
                raise TypeError(
                    f"{cls.__name__}.{field.name}: a field left out of __init__ needs a default"
                )
            body.append(f"    {setter}(self, {default})")
            continue
        has_default = field.default is not dataclasses.MISSING
        arguments.append(f"{field.name}={default}" if has_default else field.name)
        body.append(f"    {setter}(self, {field.name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    exec(f"def __init__(self, {', '.join(arguments)}):\n" + "\n".join(body), names)
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]
    return cls
