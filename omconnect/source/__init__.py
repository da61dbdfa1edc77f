"""The iterator-style source base: write a source as configure / iterator /
close_resources, and get batching, idle backoff, offset entries, transformers from bytes
to records and the assignment of objects to tasks. See ``docs/source-base.md``.
"""

from omconnect.source.backoff import (
    MAX_IDLE_DELAY,
    SYSTEM_CLOCK,
    Backoff,
    BackoffConfig,
    Clock,
    SystemClock,
)
from omconnect.source.config import SourceCommonConfig, common_config_def
from omconnect.source.distribution import (
    DistributionStrategy,
    HashDistribution,
    PartitionRegexDistribution,
    create_distribution,
    task_configs,
)
from omconnect.source.iterators import mark_last
from omconnect.source.offsets import OffsetManager, OffsetManagerEntry
from omconnect.source.task import IteratorSourceTask
from omconnect.source.transformers import (
    KeySource,
    TransformedRecord,
    Transformer,
    create_transformer,
    open_decompressed,
)

__all__ = [
    "MAX_IDLE_DELAY",
    "SYSTEM_CLOCK",
    "Backoff",
    "BackoffConfig",
    "Clock",
    "DistributionStrategy",
    "HashDistribution",
    "IteratorSourceTask",
    "KeySource",
    "OffsetManager",
    "OffsetManagerEntry",
    "PartitionRegexDistribution",
    "SourceCommonConfig",
    "SystemClock",
    "TransformedRecord",
    "Transformer",
    "common_config_def",
    "create_distribution",
    "create_transformer",
    "mark_last",
    "open_decompressed",
    "task_configs",
]
