"""The runtime's side of transforms: validating them, building a task's chain, and
applying it with per-record error handling.

The chain (:class:`~omconnect.transforms.chain.TransformChain`) is applied here stage by
stage so that the runtime knows, for every input record, whether it came out, was dropped
by a transform (a filter), or failed; the source path needs that to call
``commit_record(record, None)`` for dropped records and to track offsets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from omconnect.records import ConnectRecord, SourceRecord
from omconnect.runtime.retry_with_tolerance import (
    RetryWithTolerance,
    Stage,
    Tolerated,
    class_name,
)
from omconnect.transforms.chain import TransformChain
from omconnect.transport.messages import Message

__all__ = ["TransformRunner", "transform_config_errors"]

R = TypeVar("R", bound=ConnectRecord)


def transform_config_errors(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per-key problems with the ``transforms``/``predicates`` of a connector config."""
    if not config.get("transforms") and not config.get("predicates"):
        return {}
    return TransformChain.validate(config)


class TransformRunner:
    """Applies a task's chain, reporting which records were dropped or failed.

    Args:
        chain: The task's chain (may be empty).
        errors: The task's error handling.

    """

    def __init__(self, chain: TransformChain, errors: RetryWithTolerance) -> None:
        self.chain = chain
        self._errors = errors
        self._plan = tuple(
            (stage.transform.apply, stage.predicate.test if stage.predicate else None,
             stage.negate)
            for stage in chain.stages
        )

    @classmethod
    def from_config(cls, config: Mapping[str, Any], errors: RetryWithTolerance
                    ) -> TransformRunner:
        """The runner for a connector config.

        Raises:
            ConfigError: The transforms are misconfigured (naming the key).

        """
        return cls(TransformChain.from_config(config), errors)

    @property
    def empty(self) -> bool:
        """Whether there is nothing to apply."""
        return not self._plan

    def apply(
        self,
        records: Sequence[R],
        messages: Sequence[Message] | None = None,
    ) -> list[R | Tolerated | None]:
        """Every record through the chain.

        Args:
            records: The batch.
            messages: For sink records, the consumed message of each record (reported
                with failures).

        Returns:
            One entry per input record, in order: the transformed record, ``None`` when a
            transform dropped it, or :class:`Tolerated` when it failed and was tolerated.

        Raises:
            ToleranceExceededError: A record failed and errors.tolerance is none.

        """
        plan = self._plan
        out: list[R | Tolerated | None] = []
        append = out.append
        for i, record in enumerate(records):
            current: Any = record
            try:
                for apply, test, negate in plan:
                    if test is None or test(current) != negate:
                        current = apply(current)
                        if current is None:
                            break
            except Exception:
                append(self._retry(record, None if messages is None else messages[i]))
                continue
            append(current)
        return out

    def _through(self, record: Any) -> Any:
        current = record
        for apply, test, negate in self._plan:
            if test is None or test(current) != negate:
                current = apply(current)
                if current is None:
                    break
        return current

    def _retry(self, record: Any, message: Message | None) -> Any:
        failing = self._failing_stage(record)
        return self._errors.execute(
            lambda: self._through(record), Stage.TRANSFORMATION, failing,
            message=message,
            source_record=record if isinstance(record, SourceRecord) else None)

    def _failing_stage(self, record: Any) -> str:
        current = record
        for stage in self.chain.stages:
            try:
                if stage.applies_to(current):
                    current = stage.transform.apply(current)
            except Exception:
                return class_name(stage.transform)
            if current is None:
                break
        return class_name(self.chain.stages[0].transform) if self.chain.stages else ""

    def close(self) -> None:
        """Close the chain's transforms and predicates."""
        self.chain.close()
