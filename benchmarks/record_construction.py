"""What it costs to build one record, by construction strategy.

Usage::

    python benchmarks/record_construction.py [--number 20000] [--rounds 40]

Builds a ``SinkRecord`` (12 fields) and a ``Message`` (7 fields) each way, ``--number``
times per round over ``--rounds`` interleaved rounds, and prints the fastest round in ns
per object (the minimum is the figure least disturbed by other work on the machine):

* ``attrs __init__ (keywords)`` — the public constructor, as connectors and transforms
  call it.
* ``attrs __init__ (positional)`` — the same constructor without keyword arguments
  (``Message`` only: records are keyword-only).
* ``object.__setattr__ per field`` — what a hand-written ``__init__`` of a frozen class
  would do.
* ``member descriptor __set__`` — the slots' own setters, bound once.
* ``twin class + __class__ swap`` — :func:`omconnect._builders.builder`, what the runtime
  uses (``build_sink_record``, ``build_message``).
* ``plain slots class`` and ``tuple subclass`` — not frozen attrs classes at all: the
  floor CPython allows for an object with that many fields, for comparison.

The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import timeit
from collections.abc import Callable
from typing import Any

import attrs

from omconnect.data import BYTES_SCHEMA, Headers
from omconnect.records import SinkRecord, build_sink_record
from omconnect.transport.messages import Message, build_message

VALUE = b"x" * 100
EMPTY = Headers.EMPTY
SINK_FIELDS = [field.name for field in attrs.fields(SinkRecord)]
SINK_VALUES = ("t", 0, None, None, BYTES_SCHEMA, VALUE, 5, EMPTY, 7, "t", 0, 7)
MESSAGE_FIELDS = [field.name for field in attrs.fields(Message)]
MESSAGE_VALUES = ("t", None, VALUE, (), 5, 0, 7)


def _generated(name: str, code: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    exec(compile(code, f"<{name}>", "exec"), namespace)
    built: Callable[..., Any] = namespace[name]
    return built


def _setattr_builder(cls: type[Any], names: list[str]) -> Callable[..., Any]:
    body = "".join(f"    set(r, {n!r}, {n})\n" for n in names)
    return _generated("build", f"def build({', '.join(names)}):\n    r = new(cls)\n{body}"
                      "    return r\n", {"new": object.__new__, "set": object.__setattr__,
                                        "cls": cls})


def _descriptor_builder(cls: type[Any], names: list[str]) -> Callable[..., Any]:
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    for name in names:
        namespace[f"set_{name}"] = getattr(cls, name).__set__
    body = "".join(f"    set_{n}(r, {n})\n" for n in names)
    return _generated("build", f"def build({', '.join(names)}):\n    r = new(cls)\n{body}"
                      "    return r\n", namespace)


def _plain_class(names: list[str]) -> type[Any]:
    body = "".join(f"        self.{n} = {n}\n" for n in names)
    namespace: dict[str, Any] = {}
    exec(f"class Plain:\n    __slots__ = {tuple(names)!r}\n"
         f"    def __init__(self, {', '.join(names)}):\n{body}", namespace)
    plain: type[Any] = namespace["Plain"]
    return plain


class _Tuple(tuple):  # type: ignore[type-arg]
    __slots__ = ()


def strategies() -> dict[str, dict[str, Callable[[], Any]]]:
    """The ways to build each kind of object, as zero-argument callables."""
    sink_kwargs = dict(zip(SINK_FIELDS, SINK_VALUES, strict=True))
    plain_sink, plain_message = _plain_class(SINK_FIELDS), _plain_class(MESSAGE_FIELDS)
    sink_setattr = _setattr_builder(SinkRecord, SINK_FIELDS)
    sink_descriptors = _descriptor_builder(SinkRecord, SINK_FIELDS)
    message_setattr = _setattr_builder(Message, MESSAGE_FIELDS)
    message_descriptors = _descriptor_builder(Message, MESSAGE_FIELDS)
    new_tuple = tuple.__new__
    return {
        "SinkRecord": {
            "attrs __init__ (keywords)": lambda: SinkRecord(**sink_kwargs),
            "object.__setattr__ per field": lambda: sink_setattr(*SINK_VALUES),
            "member descriptor __set__": lambda: sink_descriptors(*SINK_VALUES),
            "twin class + __class__ swap": lambda: build_sink_record(*SINK_VALUES),
            "plain slots class": lambda: plain_sink(*SINK_VALUES),
            "tuple subclass": lambda: new_tuple(_Tuple, SINK_VALUES),
        },
        "Message": {
            "attrs __init__ (positional)": lambda: Message(*MESSAGE_VALUES),
            "object.__setattr__ per field": lambda: message_setattr(*MESSAGE_VALUES),
            "member descriptor __set__": lambda: message_descriptors(*MESSAGE_VALUES),
            "twin class + __class__ swap": lambda: build_message(*MESSAGE_VALUES),
            "plain slots class": lambda: plain_message(*MESSAGE_VALUES),
            "tuple subclass": lambda: new_tuple(_Tuple, MESSAGE_VALUES),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    cases = strategies()
    best: dict[str, dict[str, float]] = {kind: {} for kind in cases}
    for _ in range(args.rounds):  # interleaved, so load changes hit every strategy alike
        for kind, ways in cases.items():
            for name, build in ways.items():
                seconds = timeit.timeit(build, number=args.number) / args.number
                best[kind][name] = min(best[kind].get(name, seconds), seconds)
    print(f"fastest of {args.rounds} rounds x {args.number:,} constructions; "
          f"load {load:.2f} -> {os.getloadavg()[0]:.2f}")
    for kind, figures in best.items():
        print(kind)
        for name, seconds in figures.items():
            print(f"  {name:<30} {seconds * 1e9:6.0f} ns")
    print(json.dumps({"benchmark": "record_construction", "load_average": round(load, 2),
                      "ns": {kind: {name: round(s * 1e9) for name, s in figures.items()}
                             for kind, figures in best.items()}}))


if __name__ == "__main__":
    main()
