"""The data generator's task and settings: schema'd records at a chosen rate,
reproducible by seed.

Settings (also ``kafka.topic`` and ``iterations``, Confluent datagen's names for ``topic``
and ``max.messages``):

* ``topic`` — where records go.
* ``quickstart`` — ``orders`` (default), ``users``, ``pageviews`` or ``payload``; see
  :mod:`omconnect_datagen.quickstarts` for their schemas.
* ``max.messages`` — stop after this many records in total (``-1``: never stop); after
  that, ``poll`` returns ``None``.
* ``rate`` — records per second in total, shared by the tasks (``0``: as fast as possible).
* ``batch.size`` — most records per poll.
* ``seed`` — the same seed gives the same records (``0`` by default, so runs repeat).
* ``payload.size`` — value size in bytes for ``quickstart=payload``.

Work is split across ``tasks.max`` tasks: with ``max.messages``, task ``i`` of ``n`` makes
the ``i``-th of ``n`` equal contiguous ranges of sequence numbers; without, it makes the
blocks (of :data:`~omconnect_datagen.quickstarts.BLOCK` records) ``i``, ``i + n``, …
Offsets: source partition ``{"datagen": <quickstart>, "task": i}``, offset
``{"sequence": <records this task made>}``; a restarted task continues with the next
record, the same one it would have made. Changing ``tasks.max`` changes which task makes
which block: keep it when resuming.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any

from omconnect import __version__
from omconnect.config import ConfigDef, ConfigType, Importance, OneOf, Range
from omconnect.connector import SourceTask
from omconnect.data.headers import Headers
from omconnect.records import JsonScalar, SourceRecord, build_source_record
from omconnect_datagen.quickstarts import BLOCK, QUICKSTARTS, Block, block_rng

__all__ = ["CONFIG_DEF", "DatagenTask", "parse_config"]

TOPIC = "topic"
KAFKA_TOPIC = "kafka.topic"
QUICKSTART = "quickstart"
MAX_MESSAGES = "max.messages"
ITERATIONS = "iterations"
RATE = "rate"
BATCH_SIZE = "batch.size"
SEED = "seed"
PAYLOAD_SIZE = "payload.size"

_TASK = "datagen.task"
_TASKS = "datagen.tasks"

_IDLE_WAIT_S = 0.1
_MAX_RATE_WAIT_S = 0.5

CONFIG_DEF = (
    ConfigDef()
    .define(TOPIC, ConfigType.STRING, None, importance=Importance.HIGH,
            documentation="The topic to write the generated records to.")
    .define(KAFKA_TOPIC, ConfigType.STRING, None, importance=Importance.LOW,
            documentation="Confluent datagen's name for topic.")
    .define(QUICKSTART, ConfigType.STRING, "orders", importance=Importance.HIGH,
            validators=[OneOf(tuple(QUICKSTARTS))],
            documentation="The kind of records: orders, users, pageviews or payload.")
    .define(MAX_MESSAGES, ConfigType.LONG, -1, importance=Importance.MEDIUM,
            validators=[Range(min=-1)],
            documentation="Stop after this many records in total; -1 never stops.")
    .define(ITERATIONS, ConfigType.LONG, None, importance=Importance.LOW,
            validators=[Range(min=-1)],
            documentation="Confluent datagen's name for max.messages.")
    .define(RATE, ConfigType.DOUBLE, 0.0, importance=Importance.MEDIUM,
            validators=[Range(min=0)],
            documentation="Records per second, in total over the tasks; 0 is as fast as "
            "possible.")
    .define(BATCH_SIZE, ConfigType.INT, 1000, importance=Importance.LOW,
            validators=[Range(min=1)], documentation="The most records per poll.")
    .define(SEED, ConfigType.LONG, 0, importance=Importance.LOW,
            documentation="Random seed: the same seed makes the same records.")
    .define(PAYLOAD_SIZE, ConfigType.INT, 100, importance=Importance.LOW,
            validators=[Range(min=0, max=64 * 1024 * 1024)],
            documentation="Bytes per value for quickstart=payload.")
)
"""The generator's settings."""


def parse_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The generator's settings parsed, with Confluent datagen's names folded into ours.

    Raises:
        ConfigError: Naming each bad key.

    """
    values = CONFIG_DEF.parse(config, what="datagen connector configuration")
    values[TOPIC] = values.get(TOPIC) or values.get(KAFKA_TOPIC)
    if values.get(ITERATIONS) is not None and str(config.get(MAX_MESSAGES, "")) == "":
        values[MAX_MESSAGES] = values[ITERATIONS]
    values[ITERATIONS] = None
    values[KAFKA_TOPIC] = None
    return values


class DatagenTask(SourceTask):
    """Makes its share of the records; see the module documentation."""

    def __init__(self) -> None:
        super().__init__()
        self._stopping = threading.Event()
        self._block: Block | None = None
        self._made = 0  # records this task made (the next local sequence number)

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def start(self, config: Mapping[str, Any]) -> None:
        """Read the config and the committed offset."""
        values = parse_config(config)
        self._topic = str(values[TOPIC])
        self._quickstart = QUICKSTARTS[str(values[QUICKSTART]).lower()]
        self._max = int(values[MAX_MESSAGES])
        self._batch_size = int(values[BATCH_SIZE])
        self._seed = int(values[SEED])
        self._payload_size = int(values[PAYLOAD_SIZE])
        self._task = int(config.get(_TASK, 0))
        self._tasks = max(1, int(config.get(_TASKS, 1)))
        self._rate = float(values[RATE]) / self._tasks
        self._partition: dict[str, JsonScalar] = {"datagen": self._quickstart.name,
                                                  "task": self._task}
        stored = self.context.offset_storage_reader.offset(self._partition) or {}
        sequence = stored.get("sequence")
        self._made = int(sequence) if isinstance(sequence, int) and sequence > 0 else 0
        self._rate_start = time.monotonic()
        self._rate_made = 0
        # With max.messages, task i makes the i-th of tasks.max equal contiguous ranges
        # of sequence numbers; without, every tasks.max-th block.
        self._first = self._task * self._max // self._tasks if self._max >= 0 else 0
        self._end = (self._task + 1) * self._max // self._tasks if self._max >= 0 else -1

    def _sequence(self, made: int) -> int:
        """The global sequence number of this task's ``made``-th record."""
        if self._end >= 0:
            return self._first + made
        block = self._task + (made // BLOCK) * self._tasks
        return block * BLOCK + made % BLOCK

    def _remaining_in_block(self, made: int) -> int:
        sequence = self._sequence(made)
        left = BLOCK - sequence % BLOCK
        if self._end >= 0:
            left = min(left, max(0, self._end - sequence))
        return left

    @property
    def exhausted(self) -> bool:
        """Whether this task has made every record it will make (``max.messages``)."""
        return self._end >= 0 and self._sequence(self._made) >= self._end

    def poll(self) -> Sequence[SourceRecord] | None:
        """Up to ``batch.size`` new records (fewer to keep to ``rate``), or ``None`` when
        ``max.messages`` were made.
        """
        if self._stopping.is_set():
            return None
        if self.exhausted:
            self._stopping.wait(_IDLE_WAIT_S)
            return None
        want = self._batch_size
        if self._rate > 0:
            want = min(want, self._allowed())
            if want <= 0:
                return None
        records: list[SourceRecord] = []
        while len(records) < want:
            count = min(want - len(records), self._remaining_in_block(self._made))
            if count <= 0:
                break
            self._append(records, count)
        self._rate_made += len(records)
        return records or None

    def _allowed(self) -> int:
        """Records the rate allows now; waits (interruptibly) for the next one if none.
        After a pause the generator does not burst: at most a second's worth is due.
        """
        rate = self._rate
        elapsed = time.monotonic() - self._rate_start
        allowed = int(elapsed * rate) + 1 - self._rate_made
        if allowed <= 0:
            self._stopping.wait(min(self._rate_made / rate - elapsed, _MAX_RATE_WAIT_S))
            elapsed = time.monotonic() - self._rate_start
            allowed = int(elapsed * rate) + 1 - self._rate_made
        burst = max(1, int(rate))
        if allowed > burst:
            self._rate_start = time.monotonic() - (self._rate_made + burst - 1) / rate
            allowed = burst
        return max(0, allowed)

    def _append(self, records: list[SourceRecord], count: int) -> None:
        made = self._made
        first = self._sequence(made)
        block = self._block
        if block is None or not block.first <= first < block.first + len(block.values):
            start = first - first % BLOCK
            block = self._block = self._quickstart.generate(
                block_rng(self._seed, start // BLOCK), start, BLOCK, self._payload_size)
        i = first - block.first
        topic = self._topic
        key_schema = self._quickstart.key_schema
        value_schema = self._quickstart.value_schema
        partition = self._partition
        values = block.values[i:i + count]
        sequences = range(made + 1, made + count + 1)
        times: Iterable[int | None] = repeat(None, count) if block.timestamps is None \
            else block.timestamps[i:i + count]
        # omconnect's internal fast constructor (every field given, in final form): a
        # generator's job is to cost next to nothing per record.
        records.extend(map(build_source_record, repeat(topic, count), repeat(None, count),
                           repeat(key_schema, count), block.keys[i:i + count],
                           repeat(value_schema, count), values, times,
                           repeat(Headers.EMPTY, count), repeat(partition, count),
                           [{"sequence": n} for n in sequences]))
        self._made = made + count

    def stop(self) -> None:
        """Make a waiting :meth:`poll` return at once."""
        self._stopping.set()
