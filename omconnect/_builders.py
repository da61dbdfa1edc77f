"""Fast construction of frozen, slotted attrs instances, for the runtime's hot path.

A frozen attrs class forbids ``__setattr__``, so its generated ``__init__`` sets each
field with a call to ``object.__setattr__``; with keyword arguments, a converter and a
post-init hook on top, building a ``SinkRecord`` cost 1.5-3 µs, more than everything
else the runtime does per record. :func:`builder` makes a function that takes every field
positionally and builds the same instance three to five times faster (see
``benchmarks/record_construction.py``):

* it creates an instance of a *twin* class (same base, same slots, ordinary
  ``__setattr__``, no ``__init__``), so each field is a plain slot store (a few ns each);
* then it sets the instance's ``__class__`` to the real class, which CPython allows
  because both have the same memory layout. That assignment is the most expensive step,
  and still far cheaper than a frozen class's ``__init__``.

The result is indistinguishable from one made by the class's ``__init__`` with the same
values: same type, equality, hash and repr. What is skipped is the ``__init__`` itself:
no defaults, converters, validators or ``__attrs_post_init__`` run, so the caller passes
every field already in its final form. That is why builders are private to omconnect,
used only where the runtime and the transports make records in bulk from values they
produced themselves.

If the interpreter refuses the ``__class__`` assignment (a layout it does not consider
compatible), :func:`builder` falls back, once, at import time, to setting each field with
``object.__setattr__``: slower, never wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["builder"]


def builder(cls: type[Any], *, check: tuple[Any, ...] | None = None) -> Callable[..., Any]:
    """A function ``build(*values)`` returning a ``cls`` instance with those field values.

    Args:
        cls: A frozen attrs class with ``slots=True``.
        check: Sample field values (one per field, in order) used to verify the fast
            path once; default: ``None`` for every field.

    Returns:
        The builder: its positional parameters are ``cls``'s fields in definition order.

    """
    names = [field.name for field in attrs.fields(cls)]
    sample = check if check is not None else (None,) * len(names)
    fast = _twin_builder(cls, names)
    if fast is not None:
        try:
            built = fast(*sample)
            if type(built) is cls and all(
                    getattr(built, n) is v for n, v in zip(names, sample, strict=True)):
                return fast
        except TypeError:  # the interpreter refused the __class__ assignment
            pass
    return _setattr_builder(cls, names)


def _twin_builder(cls: type[Any], names: list[str]) -> Callable[..., Any] | None:
    own = tuple(s for s in cls.__dict__.get("__slots__", ()) if s != "__weakref__")
    if "__weakref__" in cls.__dict__.get("__slots__", ()):
        return None  # a weakref slot of its own makes the twin's layout differ
    twin = type(f"_{cls.__name__}Twin", cls.__bases__, {
        "__slots__": own,
        "__setattr__": object.__setattr__,  # both, or the base's frozen hooks stay in use
        "__delattr__": object.__delattr__,
        "__init__": object.__init__,  # twin() is cheaper than object.__new__(twin)
        "__module__": cls.__module__,
    })
    params = ", ".join(names)
    body = "".join(f"    r.{n} = {n}\n" for n in names)
    code = f"def build({params}):\n    r = twin()\n{body}    r.__class__ = cls\n    return r\n"
    namespace: dict[str, Any] = {"twin": twin, "cls": cls}
    exec(compile(code, f"<fast builder of {cls.__qualname__}>", "exec"), namespace)
    built: Callable[..., Any] = namespace["build"]
    return built


def _setattr_builder(cls: type[Any], names: list[str]) -> Callable[..., Any]:
    params = ", ".join(names)
    body = "".join(f"    set(r, {n!r}, {n})\n" for n in names)
    code = f"def build({params}):\n    r = new(cls)\n{body}    return r\n"
    namespace: dict[str, Any] = {"new": object.__new__, "set": object.__setattr__, "cls": cls}
    exec(compile(code, f"<builder of {cls.__qualname__}>", "exec"), namespace)
    built: Callable[..., Any] = namespace["build"]
    return built
