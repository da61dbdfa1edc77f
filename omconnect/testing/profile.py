"""How the suite builds and controls the transport under test.

A :class:`TransportFactory` builds a fresh :class:`~omconnect.transport.Transport` each
time it is called (calling it again "reopens" the same storage or broker). It is plain
data (a class path and a config), so the suite can rebuild the transport in another process
for the cross-process cases.

A :class:`TransportProfile` is what a transport's own test setup supplies to the suite: the
options to use, an optional :class:`BrokerControl` for the broker-restart case, and an
optional configuration that points at a broker that is not there (for the
unreachable-broker case). A package offers one by registering a
``conformance_profile(workdir) -> TransportProfile`` function under the
``omconnect.conformance_profiles`` entry point, named after the transport (the embedded
transport's is ``omconnect.testing.embedded_profile``; omconnect's own test brokers
register theirs from ``tests/brokers``), or a config file names one with
``conformance.profile``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs

from omconnect.errors import ConfigError
from omconnect.transport.spi import Transport

__all__ = [
    "PROFILE_ENTRY_POINTS",
    "TMP_PLACEHOLDER",
    "BrokerControl",
    "CommandBrokerControl",
    "TransportFactory",
    "TransportProfile",
    "UnreachableBroker",
    "class_path",
    "load_config_file",
    "substitute_tmp",
]

TMP_PLACEHOLDER = "{tmp}"
"""Written in a config value, replaced by a fresh directory for each case."""

PROFILE_ENTRY_POINTS = "omconnect.conformance_profiles"
"""The entry-point group where a package registers a transport's profile: the entry's
name is the transport's name, its value ``module:function`` taking the run's directory
and returning a :class:`TransportProfile`."""

SUITE_PREFIX = "conformance."
"""Config-file keys with this prefix configure the suite, not the transport."""


@runtime_checkable
class BrokerControl(Protocol):
    """Restarts the broker behind a transport (for the broker-restart case)."""

    def restart(self) -> None:
        """Stop the broker and start it again on the same address and storage; return
        once it accepts connections.
        """


@attrs.frozen(kw_only=True)
class CommandBrokerControl:
    """A :class:`BrokerControl` that runs a shell command (e.g.
    ``rabbitmqctl stop_app && rabbitmqctl start_app``).

    Attributes:
        command: The shell command.
        timeout: Seconds the command may take.

    """

    command: str
    timeout: float = 120.0

    def restart(self) -> None:
        """Run the command; fail when it exits non-zero or takes too long."""
        done = subprocess.run(
            self.command, shell=True, capture_output=True, text=True, timeout=self.timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"broker restart command {self.command!r} exited {done.returncode}: "
                f"{done.stderr.strip() or done.stdout.strip()}"
            )


def class_path(cls: type) -> str:
    """``module:QualName`` of a class, importable in another process."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _import(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@attrs.frozen(kw_only=True)
class TransportFactory:
    """Builds a fresh transport of one class with one config; picklable.

    Attributes:
        transport_class: ``module:QualName`` of the :class:`Transport` subclass.
        config: Its options (without the ``<name>.`` prefix).

    """

    transport_class: str
    config: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def of(cls, transport_class: type[Transport], config: Mapping[str, Any]) -> TransportFactory:
        """A factory for ``transport_class`` with ``config``."""
        return cls(transport_class=class_path(transport_class), config=dict(config))

    @classmethod
    def rebuilding(cls, transport: Transport) -> TransportFactory:
        """A factory that builds transports like ``transport`` (its class and config)."""
        return cls.of(type(transport), transport.config)

    def with_config(self, changes: Mapping[str, Any]) -> TransportFactory:
        """The same factory with some options changed."""
        return attrs.evolve(self, config={**self.config, **changes})

    def transport_type(self) -> type[Transport]:
        """The transport class (imported)."""
        transport_class: type[Transport] = _import(self.transport_class)
        return transport_class

    def __call__(self) -> Transport:
        """A new transport."""
        transport: Transport = self.transport_type()(dict(self.config))
        return transport


@attrs.frozen(kw_only=True)
class UnreachableBroker:
    """How to build the transport against a broker that is not there.

    Attributes:
        factory: Builds a transport whose broker address answers nothing.
        timeout: The timeout that config sets, in seconds: the transport must fail
            within it (the suite allows some slack).

    """

    factory: Callable[[], Transport]
    timeout: float


@attrs.define(kw_only=True)
class TransportProfile:
    """What a transport's test setup gives the suite.

    Attributes:
        config: Transport options; string values may hold ``{tmp}`` (a fresh directory
            per case).
        broker: Restarts the broker, or ``None`` when the case cannot run.
        unreachable_config: Options that, merged over ``config``, point at a broker that
            is not there; ``None`` when the transport has no broker.
        unreachable_timeout: The timeout (seconds) ``unreachable_config`` sets.
        stop: Called once at the end of the run (e.g. stops a broker it started).
        expected_failures: Case name (e.g. ``test_seek_back_redelivers``) -> reason, for
            known defects of the broker under test; those cases run as
            ``xfail(strict=True)``, so a defect that is fixed shows up too.
        skip_cases: Case name -> reason, for a defect of the broker that breaks the case
            in some runs but not all (a strict xfail would fail the others): skipped,
            naming it. Pin the defect with a deterministic test of its own.

    """

    config: dict[str, Any] = attrs.field(factory=dict)
    broker: BrokerControl | None = None
    unreachable_config: dict[str, Any] | None = None
    unreachable_timeout: float = 10.0
    stop: Callable[[], None] | None = None
    expected_failures: dict[str, str] = attrs.field(factory=dict)
    skip_cases: dict[str, str] = attrs.field(factory=dict)

    @classmethod
    def resolve(
        cls, transport_class: type[Transport], settings: Mapping[str, Any], workdir: Path
    ) -> TransportProfile:
        """The profile for ``transport_class`` from a config file's flat ``settings``.

        ``conformance.*`` keys configure the suite: ``conformance.profile`` (a
        ``module:function`` returning a profile, called with ``workdir``),
        ``conformance.restart.command``, ``conformance.unreachable.config.<option>`` and
        ``conformance.unreachable.timeout``, ``conformance.xfail.<case>`` (the reason a
        case is expected to fail on this broker). Without ``conformance.profile`` the
        profile registered for the transport's name under :data:`PROFILE_ENTRY_POINTS` is
        used when there is one. The remaining keys are transport options (a ``<name>.``
        prefix, as in worker configs, is removed) and override the profile's.
        """
        name = getattr(transport_class, "name", "")
        suite = {k[len(SUITE_PREFIX):]: v for k, v in settings.items()
                 if k.startswith(SUITE_PREFIX)}
        options = {_strip(k, name): v for k, v in settings.items()
                   if not k.startswith(SUITE_PREFIX)}
        hook = _profile_hook(transport_class, suite.get("profile"))
        profile = hook(workdir) if hook is not None else cls()
        if not isinstance(profile, TransportProfile):
            raise ConfigError(
                f"conformance profile of transport {name!r} returned {type(profile).__name__}, "
                "not a TransportProfile", key="conformance.profile")
        profile.config = {**profile.config, **options}
        if "restart.command" in suite:
            profile.broker = CommandBrokerControl(command=str(suite["restart.command"]))
        unreachable = {k[len("unreachable.config."):]: v for k, v in suite.items()
                       if k.startswith("unreachable.config.")}
        if unreachable:
            profile.unreachable_config = unreachable
        profile.expected_failures.update(
            {k[len("xfail."):]: str(v) for k, v in suite.items() if k.startswith("xfail.")})
        if "unreachable.timeout" in suite:
            try:
                profile.unreachable_timeout = float(suite["unreachable.timeout"])
            except ValueError:
                raise ConfigError(
                    f"conformance.unreachable.timeout must be a number of seconds, got "
                    f"{suite['unreachable.timeout']!r}", key="conformance.unreachable.timeout"
                ) from None
        return profile


def _strip(key: str, name: str) -> str:
    return key[len(name) + 1:] if name and key.startswith(name + ".") else key


def _profile_hook(
    transport_class: type[Transport], named: Any
) -> Callable[[Path], TransportProfile] | None:
    if named:
        try:
            hook: Callable[[Path], TransportProfile] = _import(str(named))
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(
                f"conformance.profile {named!r} cannot be imported ({exc}); write it as "
                "package.module:function", key="conformance.profile") from exc
        return hook
    name = str(getattr(transport_class, "name", "") or "")
    for entry_point in importlib.metadata.entry_points(group=PROFILE_ENTRY_POINTS):
        if entry_point.name == name:
            try:
                registered: Callable[[Path], TransportProfile] = entry_point.load()
            except (ImportError, AttributeError) as exc:
                raise ConfigError(
                    f"the conformance profile registered for transport {name!r} "
                    f"({entry_point.value}) cannot be imported: {exc}",
                    key="conformance.profile") from exc
            return registered
    return None


def substitute_tmp(config: Mapping[str, Any], directory: Path) -> dict[str, Any]:
    """``config`` with ``{tmp}`` in string values replaced by ``directory``."""
    return {k: v.replace(TMP_PLACEHOLDER, str(directory)) if isinstance(v, str) else v
            for k, v in config.items()}


def load_config_file(path: str | Path) -> dict[str, Any]:
    """A config file (YAML, JSON or Java ``.properties``) as a flat dict of dotted keys.

    Raises:
        ConfigError: The file is missing or cannot be parsed (naming file and line).

    """
    from omconnect.config.files import load_config_file as load

    return dict(load(path))
