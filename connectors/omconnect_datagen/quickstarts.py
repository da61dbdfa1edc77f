"""The data the generator makes: schemas and deterministic generators per quickstart.

Records are numbered from 0 (their *sequence number*). Numbers are grouped in blocks of
:data:`BLOCK` records; each block is generated at once from its own random generator,
seeded from ``(seed, block)``, so record ``n`` is the same whatever batch size, task or
restart produced it, and a generator resuming in the middle of a block only regenerates
that block.

Quickstarts (in the spirit of Confluent's datagen):

* ``orders`` — key ``orderid`` (int64); value struct ``ordertime`` (int64, ms), ``orderid``
  (int64, the sequence number), ``itemid`` (string ``Item_<n>``), ``orderunits``
  (float64), ``address`` (struct ``city``, ``state``, ``zipcode`` int64).
* ``users`` — key ``userid``; value struct ``registertime`` (int64), ``userid``
  (``User_1`` … ``User_9``), ``regionid`` (``Region_1`` … ``Region_9``), ``gender``
  (``MALE``, ``FEMALE``, ``OTHER``).
* ``pageviews`` — key ``viewtime``; value struct ``viewtime`` (int64), ``userid``,
  ``pageid`` (``Page_1`` … ``Page_99``).
* ``payload`` — no key; value ``payload.size`` pseudo-random bytes (BYTES schema; a
  SHAKE-128 stream per block): for throughput measurements, where records of a fixed
  size are wanted.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

import attrs

from omconnect.data import (
    BYTES_SCHEMA,
    FLOAT64_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
    Struct,
)

__all__ = ["BLOCK", "QUICKSTARTS", "Block", "Quickstart", "block_rng", "payload_bytes"]

BLOCK = 1024
"""Records generated together from one random generator."""

_EPOCH_MS = 1_700_000_000_000
"""Where generated times start (2023-11-14), plus about a second per record."""


@attrs.frozen(kw_only=True)
class Block:
    """The generated keys and values of sequence numbers ``first`` … ``first + len - 1``."""

    first: int
    keys: list[Any]
    values: list[Any]
    timestamps: list[int] | None


@attrs.frozen(kw_only=True)
class Quickstart:
    """One kind of generated data.

    Attributes:
        name: The ``quickstart`` setting that selects it.
        key_schema: The key's schema (``None``: no key).
        value_schema: The value's schema (for ``payload``, built per ``payload.size``).
        generate: Makes a block: ``(rng, first, count, payload_size) -> Block``.

    """

    name: str
    key_schema: Schema | None
    value_schema: Schema
    generate: Callable[[random.Random, int, int, int], Block]


def block_rng(seed: int, block: int) -> random.Random:
    """The random generator of block number ``block`` for ``seed``."""
    return random.Random(seed * 0x9E3779B97F4A7C15 + block)


_ADDRESS = (SchemaBuilder.struct().name("omconnect.datagen.Address")
            .field("city", STRING_SCHEMA)
            .field("state", STRING_SCHEMA)
            .field("zipcode", INT64_SCHEMA)
            .build())
_ORDER = (SchemaBuilder.struct().name("omconnect.datagen.Order")
          .field("ordertime", INT64_SCHEMA)
          .field("orderid", INT64_SCHEMA)
          .field("itemid", STRING_SCHEMA)
          .field("orderunits", FLOAT64_SCHEMA)
          .field("address", _ADDRESS)
          .build())
_USER = (SchemaBuilder.struct().name("omconnect.datagen.User")
         .field("registertime", INT64_SCHEMA)
         .field("userid", STRING_SCHEMA)
         .field("regionid", STRING_SCHEMA)
         .field("gender", STRING_SCHEMA)
         .build())
_PAGEVIEW = (SchemaBuilder.struct().name("omconnect.datagen.Pageview")
             .field("viewtime", INT64_SCHEMA)
             .field("userid", STRING_SCHEMA)
             .field("pageid", STRING_SCHEMA)
             .build())

_ITEMS = [f"Item_{i}" for i in range(1000)]
_CITIES = [f"City_{i}" for i in range(100)]
_STATES = [f"State_{i}" for i in range(50)]
_USERS = [f"User_{i}" for i in range(1, 10)]
_REGIONS = [f"Region_{i}" for i in range(1, 10)]
_GENDERS = ["MALE", "FEMALE", "OTHER"]
_PAGES = [f"Page_{i}" for i in range(1, 100)]


def _times(rng: random.Random, first: int, count: int) -> list[int]:
    """Increasing times: about one second apart, jittered."""
    randrange = rng.randrange
    return [_EPOCH_MS + (first + i) * 1000 + randrange(1000) for i in range(count)]


def _orders(rng: random.Random, first: int, count: int, _size: int) -> Block:
    times = _times(rng, first, count)
    ids = list(range(first, first + count))
    choice = rng.choice
    randrange = rng.randrange
    from_values = Struct.from_values
    addresses = [from_values(_ADDRESS, [choice(_CITIES), choice(_STATES),
                                        randrange(10000, 100000)], validate=False)
                 for _ in range(count)]
    units = [round(rng.uniform(0.1, 10.0), 2) for _ in range(count)]
    values = [from_values(_ORDER, [t, i, choice(_ITEMS), u, a], validate=False)
              for t, i, u, a in zip(times, ids, units, addresses, strict=True)]
    return Block(first=first, keys=ids, values=values, timestamps=times)


def _users(rng: random.Random, first: int, count: int, _size: int) -> Block:
    times = _times(rng, first, count)
    choice = rng.choice
    users = [choice(_USERS) for _ in range(count)]
    from_values = Struct.from_values
    values = [from_values(_USER, [t, u, choice(_REGIONS), choice(_GENDERS)], validate=False)
              for t, u in zip(times, users, strict=True)]
    return Block(first=first, keys=users, values=values, timestamps=times)


def _pageviews(rng: random.Random, first: int, count: int, _size: int) -> Block:
    times = _times(rng, first, count)
    choice = rng.choice
    from_values = Struct.from_values
    values = [from_values(_PAGEVIEW, [t, choice(_USERS), choice(_PAGES)], validate=False)
              for t in times]
    return Block(first=first, keys=times, values=values, timestamps=times)


def payload_bytes(rng: random.Random, count: int, size: int) -> bytes:
    """The ``count`` values of ``size`` bytes of a payload block, concatenated: a
    SHAKE-128 stream keyed from the block's generator (as reproducible as
    ``rng.randbytes`` and 40% cheaper).
    """
    key = rng.getrandbits(128).to_bytes(16, "little")
    return hashlib.shake_128(key).digest(size * count)


def _payload(rng: random.Random, first: int, count: int, size: int) -> Block:
    data = payload_bytes(rng, count, size)
    values = [data[i:i + size] for i in range(0, size * count, size)] if size else \
        [b""] * count
    return Block(first=first, keys=[None] * count, values=values, timestamps=None)


QUICKSTARTS: dict[str, Quickstart] = {
    q.name: q for q in (
        Quickstart(name="orders", key_schema=INT64_SCHEMA, value_schema=_ORDER,
                   generate=_orders),
        Quickstart(name="users", key_schema=STRING_SCHEMA, value_schema=_USER,
                   generate=_users),
        Quickstart(name="pageviews", key_schema=INT64_SCHEMA, value_schema=_PAGEVIEW,
                   generate=_pageviews),
        Quickstart(name="payload", key_schema=None, value_schema=BYTES_SCHEMA,
                   generate=_payload),
    )
}
"""Every quickstart, by name."""
