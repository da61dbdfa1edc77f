"""The iterator-style source base: write a source as configure / iterator /
close_resources, and get batching, idle backoff, offset entries, formats from bytes
to records and the assignment of objects to tasks. See ``docs/source-base.md``.
"""

from omconnect.source_base.backoff import (
    MAX_IDLE_DELAY,
    SYSTEM_CLOCK,
    Backoff,
    BackoffConfig,
    Clock,
    SystemClock,
)
from omconnect.source_base.config import SourceCommonConfig, common_config_def
from omconnect.source_base.distribution import (
    DistributionStrategy,
    HashDistribution,
    PartitionRegexDistribution,
    create_distribution,
    task_configs,
)
from omconnect.source_base.formats import (
    KeySource,
    ParsedRecord,
    RecordFormat,
    create_format,
    open_decompressed,
)
from omconnect.source_base.iterators import mark_last
from omconnect.source_base.offset_manager import OffsetManager, OffsetManagerEntry
from omconnect.source_base.task import IteratorBatchSourceTask, IteratorSourceTask

__all__ = [
    "MAX_IDLE_DELAY",
    "SYSTEM_CLOCK",
    "Backoff",
    "BackoffConfig",
    "Clock",
    "DistributionStrategy",
    "HashDistribution",
    "IteratorBatchSourceTask",
    "IteratorSourceTask",
    "KeySource",
    "OffsetManager",
    "OffsetManagerEntry",
    "ParsedRecord",
    "PartitionRegexDistribution",
    "RecordFormat",
    "SourceCommonConfig",
    "SystemClock",
    "common_config_def",
    "create_distribution",
    "create_format",
    "mark_last",
    "open_decompressed",
    "task_configs",
]
