"""TransformChain: a connector's transforms and predicates, built from its configuration.

Configured as in Kafka Connect::

    transforms=addTopic,route
    transforms.addTopic.type=InsertField$Value          # or insert-field-value, or
    transforms.addTopic.topic.field=source_topic        #   org.apache.kafka.connect...
    transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
    transforms.route.regex=(.*)-raw
    transforms.route.replacement=$1
    transforms.route.predicate=isRaw                    # apply only where isRaw holds,
    transforms.route.negate=false                       #   or where it does not (true)
    predicates=isRaw
    predicates.isRaw.type=TopicNameMatches
    predicates.isRaw.pattern=.*-raw

The runtime builds one chain per task (:meth:`TransformChain.from_config`), calls
:meth:`TransformChain.apply_batch` from the task's thread for every batch (source: after
poll, before the converters; sink: after the converters, before put) and
:meth:`TransformChain.close` when the task stops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from omconnect import plugins
from omconnect.config.types import ConfigType
from omconnect.errors import ConfigError, DataError, MissingExtraError, PluginError
from omconnect.records import ConnectRecord
from omconnect.transforms.base import Predicate, Transformation

__all__ = ["ErrorHandler", "TransformChain", "TransformStage"]

log = logging.getLogger(__name__)

R = TypeVar("R", bound=ConnectRecord)

TRANSFORMS_KEY = "transforms"
PREDICATES_KEY = "predicates"
_STAGE_KEYS = frozenset({"type", "predicate", "negate"})


@attrs.frozen(kw_only=True)
class TransformStage:
    """One configured transformation of a chain, with the predicate that guards it.

    Attributes:
        alias: The name the user gave it in ``transforms=``.
        type_name: Its ``transforms.<alias>.type`` as written (for error reports).
        transform: The configured transformation.
        predicate: The predicate that decides where it applies, or ``None`` (everywhere).
        predicate_alias: The predicate's name in ``predicates=``, if any.
        negate: Apply where the predicate does *not* hold.

    """

    alias: str
    type_name: str
    transform: Transformation
    predicate: Predicate | None = None
    predicate_alias: str | None = None
    negate: bool = False

    def applies_to(self, record: ConnectRecord) -> bool:
        """Whether this stage transforms ``record`` (its predicate, negated if asked)."""
        return self.predicate is None or self.predicate.test(record) != self.negate


ErrorHandler = Callable[[Any, TransformStage, Exception], None]
"""Called with (the record as it entered the chain, the failing stage, the error)."""


def _aliases(config: Mapping[str, Any], key: str, errors: dict[str, list[str]]) -> list[str]:
    raw = config.get(key)
    if raw is None:
        return []
    names = ConfigType.LIST.parse(raw)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            errors.setdefault(key, []).append(
                f"alias {name!r} is listed twice; give each entry of {key} its own name")
        seen.add(name)
    return list(dict.fromkeys(names))


def _options(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {
        key[len(prefix):]: value
        for key, value in config.items()
        if key.startswith(prefix) and key[len(prefix):] not in _STAGE_KEYS
    }


def _subclass_of(base: type) -> Callable[[Any], str | None]:
    def check(obj: Any) -> str | None:
        if isinstance(obj, type) and issubclass(obj, base):
            return None
        return f"{obj!r} is not a subclass of {base.__module__}.{base.__qualname__}"

    return check


class _Builder:
    """Instantiates and configures plugins, collecting every error by config key."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config
        self.errors: dict[str, list[str]] = {}
        self.built: list[Transformation | Predicate] = []

    def error(self, key: str, message: str) -> None:
        self.errors.setdefault(key, []).append(message)

    def instance(self, group: str, section: str, alias: str, base: type) -> Any:
        kind = "transform" if base is Transformation else "predicate"
        prefix = f"{section}.{alias}."
        type_key = prefix + "type"
        name = self.config.get(type_key)
        if name is None or not str(name).strip():
            example = "insert-field-value" if kind == "transform" else "topic-name-matches"
            self.error(type_key, f"missing; set {type_key} to a {kind} name (e.g. {example}), "
                                 "a Kafka Connect class name, or a Python path "
                                 "(package.module:Class)")
            return None
        name = str(name).strip()
        try:
            cls = plugins.load(group, name, check=_subclass_of(base))
        except MissingExtraError as exc:
            self.error(type_key, str(exc))
            return None
        except PluginError as exc:
            self.error(type_key, f"{exc}; fix the value of {type_key}")
            return None
        except Exception as exc:  # e.g. an import error inside the plugin's own module
            self.error(type_key, f"{kind} {name!r} failed to load: {type(exc).__name__}: {exc}")
            return None
        options = _options(self.config, prefix)
        definition = cls.config_def
        problems = definition.validate(options, prefix=prefix)
        for key, messages in problems.items():
            for message in messages:
                self.error(key, message)
        if any(problems.values()):
            return None
        if len(definition):
            for option in options:
                if option not in definition:
                    hint = definition.suggest(option)
                    if hint:
                        log.warning("%s%s is not an option of %s; did you mean %s%s?",
                                    prefix, option, name, prefix, hint)
        try:
            instance = cls()
        except TypeError as exc:
            self.error(type_key, f"{kind} {name!r} cannot be instantiated: {exc}")
            return None
        try:
            instance.configure(options)
        except ConfigError as exc:
            self._configure_failed(prefix, type_key, exc)
            _close_quietly(instance)
            return None
        except (DataError, ValueError) as exc:
            self.error(type_key, f"{kind} {name!r} rejected its options: {exc}")
            _close_quietly(instance)
            return None
        self.built.append(instance)
        return instance

    def _configure_failed(self, prefix: str, type_key: str, exc: ConfigError) -> None:
        if exc.errors:
            for key, messages in exc.errors.items():
                shown = key if key.startswith(prefix) else prefix + key
                for message in messages:
                    self.error(shown, message)
            return
        option: str | None = exc.context.get("key")
        if not option:
            self.error(type_key, exc.message)
        else:
            self.error(option if option.startswith(prefix) else prefix + option, exc.message)

    def negate(self, alias: str, predicate_alias: str | None) -> bool:
        key = f"{TRANSFORMS_KEY}.{alias}.negate"
        raw = self.config.get(key)
        if raw is None:
            return False
        try:
            negate = bool(ConfigType.BOOLEAN.parse(raw))
        except DataError as exc:
            self.error(key, f"{exc}; fix the value of {key}")
            return False
        if predicate_alias is None:
            self.error(key, f"negate has no effect without a predicate; set "
                            f"{TRANSFORMS_KEY}.{alias}.predicate or remove {key}")
        return negate

    def close_all(self) -> None:
        for instance in self.built:
            _close_quietly(instance)


def _close_quietly(instance: Transformation | Predicate) -> None:
    try:
        instance.close()
    except Exception:
        log.exception("closing %s failed", type(instance).__name__)


def _build(
    config: Mapping[str, Any],
) -> tuple[list[TransformStage], dict[str, Predicate], _Builder]:
    builder = _Builder(config)
    predicates: dict[str, Predicate] = {}
    for alias in _aliases(config, PREDICATES_KEY, builder.errors):
        predicate = builder.instance(plugins.PREDICATES, PREDICATES_KEY, alias, Predicate)
        if predicate is not None:
            predicates[alias] = predicate
    declared = set(_aliases(config, PREDICATES_KEY, {}))
    stages: list[TransformStage] = []
    for alias in _aliases(config, TRANSFORMS_KEY, builder.errors):
        predicate_key = f"{TRANSFORMS_KEY}.{alias}.predicate"
        raw = config.get(predicate_key)
        predicate_alias = str(raw).strip() or None if raw is not None else None
        if predicate_alias is not None and predicate_alias not in declared:
            listed = ", ".join(sorted(declared)) or "none"
            builder.error(predicate_key, (
                f"predicate {predicate_alias!r} is not defined; add it to {PREDICATES_KEY} "
                f"(defined: {listed}) and set {PREDICATES_KEY}.{predicate_alias}.type"))
        negate = builder.negate(alias, predicate_alias)
        transform = builder.instance(plugins.TRANSFORMS, TRANSFORMS_KEY, alias, Transformation)
        if transform is None:
            continue
        stages.append(TransformStage(
            alias=alias,
            type_name=str(config[f"{TRANSFORMS_KEY}.{alias}.type"]).strip(),
            transform=transform,
            predicate=predicates.get(predicate_alias) if predicate_alias else None,
            predicate_alias=predicate_alias,
            negate=negate,
        ))
    _warn_unlisted(config, PREDICATES_KEY, declared)
    _warn_unlisted(config, TRANSFORMS_KEY, set(_aliases(config, TRANSFORMS_KEY, {})))
    return stages, predicates, builder


def _warn_unlisted(config: Mapping[str, Any], section: str, listed: set[str]) -> None:
    # Settings of an alias missing from the list are ignored (as in Kafka Connect, where
    # taking an alias off the list is how a transform is switched off); say so, since a
    # forgotten list entry looks exactly the same.
    unlisted = sorted({
        key[len(section) + 1:].split(".", 1)[0]
        for key in config
        if key.startswith(section + ".") and key.count(".") >= 2
    } - listed)
    for alias in unlisted:
        log.warning("%s.%s.* settings are ignored: %r is not listed in %s", section, alias,
                    alias, section)


class TransformChain:
    """The transformations of one task, applied in order to every record.

    Not thread-safe: one chain per task, used from the task's thread.

    Args:
        stages: The stages, in the order they apply.
        predicates: Every configured predicate by alias (closed with the chain; a
            predicate may guard several stages or none).

    """

    def __init__(
        self,
        stages: Sequence[TransformStage] = (),
        predicates: Mapping[str, Predicate] | None = None,
    ) -> None:
        self._stages = tuple(stages)
        self._predicates = dict(predicates or {})
        self._closed = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TransformChain:
        """The chain a connector configuration describes (``transforms=``,
        ``transforms.<alias>.*``, ``predicates=``, ``predicates.<alias>.*``).

        Other keys are ignored, so the whole connector configuration may be passed. No
        ``transforms`` key gives an empty chain, which passes records through.

        Raises:
            ConfigError: Listing every problem, each under its key: an unknown type at
                ``transforms.<alias>.type`` (with the known names and a "did you mean"),
                a bad option at ``transforms.<alias>.<option>``, an undefined predicate
                at ``transforms.<alias>.predicate``, and the same for predicates.

        """
        stages, predicates, builder = _build(config)
        if any(builder.errors.values()):
            builder.close_all()
            raise ConfigError.from_errors(builder.errors, what="transforms configuration")
        return cls(stages, predicates)

    @staticmethod
    def validate(config: Mapping[str, Any]) -> dict[str, list[str]]:
        """Per-key error messages for the transforms and predicates of ``config``
        (empty when valid). Builds and configures every plugin, then closes them.
        """
        _, _, builder = _build(config)
        builder.close_all()
        return {key: messages for key, messages in builder.errors.items() if messages}

    @property
    def stages(self) -> tuple[TransformStage, ...]:
        """The stages, in the order they apply."""
        return self._stages

    def __len__(self) -> int:
        return len(self._stages)

    def __repr__(self) -> str:
        names = ", ".join(f"{s.alias}={s.type_name}" for s in self._stages)
        return f"TransformChain({names})"

    def apply(self, record: R) -> R | None:
        """``record`` through every stage; ``None`` when a stage dropped it.

        Raises:
            Exception: Whatever a stage raised, with a note naming the stage and record.

        """
        out = self.apply_batch((record,))
        return out[0] if out else None

    def apply_batch(
        self, records: Iterable[R], *, on_error: ErrorHandler | None = None
    ) -> list[R]:
        """Every record through every stage, in order; dropped records are left out.

        Args:
            records: The batch.
            on_error: Called for a record a stage (or its predicate) failed on, with the
                record as it entered the chain, the stage and the error; that record is
                then left out and the batch goes on (the runtime's ``errors.tolerance``
                and dead-letter routing hook in here). Without it the first error is
                raised.

        Returns:
            The transformed records, in input order, without the dropped (and failed) ones.

        Raises:
            Exception: Without ``on_error``: what a stage raised, with a note naming the
                stage (alias and type) and the record (topic, partition, offset).

        """
        stages = self._stages
        if not stages:
            return list(records)
        plan = tuple(
            (stage.transform.apply, stage.predicate.test if stage.predicate else None,
             stage.negate)
            for stage in stages
        )
        out: list[R] = []
        append = out.append
        for record in records:
            current: Any = record
            index = 0
            try:
                for apply, test, negate in plan:
                    if test is None or test(current) != negate:
                        current = apply(current)
                        if current is None:
                            break
                    index += 1
            except Exception as exc:
                if on_error is None:
                    _add_note(exc, stages[index], record)
                    raise
                on_error(record, stages[index], exc)
                continue
            if current is not None:
                append(current)
        return out

    def close(self) -> None:
        """Close every transformation and predicate once; errors are logged, not raised."""
        if self._closed:
            return
        self._closed = True
        for stage in self._stages:
            _close_quietly(stage.transform)
        for predicate in self._predicates.values():
            _close_quietly(predicate)

    def __enter__(self) -> TransformChain:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _add_note(exc: Exception, stage: TransformStage, record: Any) -> None:
    where = f"topic={getattr(record, 'topic', None)!r}"
    partition = getattr(record, "partition", None)
    if partition is not None:
        where += f", partition={partition}"
    offset = getattr(record, "offset", None)
    if offset is not None:
        where += f", offset={offset}"
    exc.add_note(f"in transform {stage.alias!r} ({stage.type_name}) on the record at {where}")
