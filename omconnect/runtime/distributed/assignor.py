"""The leader's assignment step, incremental and cooperative: :func:`next_assignment`.

Kafka Connect's incremental cooperative protocol, on the config log instead of the group
coordinator's join round:

1. **What runs stays where it runs.** A live worker keeps every item (connector instance
   or task) it holds that should still run; only what no longer exists, or must move to
   balance the load, is taken from it.
2. **A worker that left is waited for.** The items of a worker that is no longer alive
   stay in its entry (nobody runs them; their status is UNASSIGNED) for
   ``scheduled.rebalance.max.delay.ms`` after the leader saw it go. Coming back in time
   under the same ``worker.id`` (a restart), it gets them back in the next assignment;
   after the delay they move.
3. **Revoke, then reassign.** An item taken from a live worker is given to nobody in the
   assignment that takes it; it is placed (in a later one) only once that worker has
   acknowledged the generation, i.e. stopped it: an item never runs on two live workers
   at once.
4. **Fair shares by moving the fewest.** Connector instances and tasks are balanced
   separately: with ``n`` live workers and ``t`` items, each worker gets ``t // n`` or
   one more. Workers above their share give up their excess (the items last in name
   order); free items go to the workers furthest below their share, ties by worker id.

The function is pure (the leader calls it with the state it read from the log and its
own clock), so the same inputs always give the same assignment.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Set

import attrs

from omconnect.runtime.distributed.assignment import Assignment, TaskKey, WorkerAssignment

__all__ = ["Plan", "next_assignment"]

Item = str | TaskKey


@attrs.frozen(kw_only=True)
class Plan:
    """What the leader should publish.

    Attributes:
        workers: The next assignment's shares, or ``None`` when nothing changes.
        recheck_at: When (leader's monotonic clock) a departed worker's wait ends and
            the leader should plan again (``None``: no wait running).

    """

    workers: dict[str, WorkerAssignment] | None
    recheck_at: float | None = None


def next_assignment(
    *,
    current: Assignment,
    alive: Mapping[str, tuple[str, str]],
    connectors: Set[str],
    tasks: Set[TaskKey],
    released: Mapping[Item, tuple[str, str, int]],
    departed_since: Mapping[str, float],
    now: float,
    delay_s: float,
) -> Plan:
    """The next assignment (see the module docstring).

    Args:
        current: The assignment in force.
        alive: Live workers: ``worker -> (session, url)``.
        connectors: Connector instances that should run.
        tasks: Tasks that should run.
        released: Items taken from a worker's session that has not acknowledged it yet.
        departed_since: When the leader first saw each worker of ``current`` that is not
            alive (monotonic seconds).
        now: The leader's monotonic clock.
        delay_s: ``scheduled.rebalance.max.delay.ms`` in seconds.

    Returns:
        The plan.

    """
    work: set[Item] = set(connectors) | set(tasks)
    held: dict[str, set[Item]] = {}
    shares: dict[str, WorkerAssignment] = {}
    recheck: float | None = None
    for worker, share in current.workers.items():
        items = (set(share.connectors) | set(share.tasks)) & work
        if worker in alive:
            held[worker] = items  # a new session of the worker gets them back at once
            continue
        since = departed_since.get(worker, now)
        if items and now < since + delay_s:
            shares[worker] = _share(share.session, share.url, items)  # waited for
            recheck = since + delay_s if recheck is None else min(recheck, since + delay_s)
    for worker in alive:
        held.setdefault(worker, set())
    waiting = {item for share in shares.values()
               for item in (*share.connectors, *share.tasks)}
    taken = waiting.union(*held.values()) if held else set(waiting)
    live_sessions = {(worker, session) for worker, (session, _) in alive.items()}
    blocked = {item for item, (worker, session, _) in released.items()
               if (worker, session) in live_sessions and item not in taken}
    free = work - taken - blocked
    if alive:
        for kind in (str, tuple):
            _balance(held, {i for i in free if isinstance(i, kind)},
                     extra=len({i for i in blocked if isinstance(i, kind)}), kind=kind)
    for worker, (session, url) in alive.items():
        shares[worker] = _share(session, url, held[worker])
    if current.same_placement(shares):
        return Plan(workers=None, recheck_at=recheck)
    return Plan(workers=shares, recheck_at=recheck)


def _balance(held: dict[str, set[Item]], free: set[Item], *, extra: int,
             kind: type) -> None:
    """Revoke the excess of workers above their share of ``kind`` items; give ``free``
    to those below it. ``extra`` items (waiting to be released) count toward the total.
    """
    counts = {w: sum(1 for i in items if isinstance(i, kind)) for w, items in held.items()}
    total = sum(counts.values()) + len(free) + extra
    base, remainder = divmod(total, len(held))
    # Workers holding the most keep the larger shares: the fewest items move.
    ranked = sorted(held, key=lambda w: (-counts[w], w))
    target = {w: base + (1 if index < remainder else 0) for index, w in enumerate(ranked)}
    for worker in ranked:
        excess = counts[worker] - target[worker]
        if excess > 0:
            mine = sorted((i for i in held[worker] if isinstance(i, kind)), key=_order)
            for item in mine[-excess:]:
                held[worker].discard(item)
            counts[worker] -= excess
    for item in sorted(free, key=_order):
        worker = min(held, key=lambda w: (counts[w] - target[w], counts[w], w))
        held[worker].add(item)
        counts[worker] += 1


def _order(item: Item) -> tuple[str, int]:
    return (item, -1) if isinstance(item, str) else item


def _share(session: str, url: str, items: Iterable[Item]) -> WorkerAssignment:
    listed = list(items)
    return WorkerAssignment(
        session=session, url=url,
        connectors=frozenset(i for i in listed if isinstance(i, str)),
        tasks=frozenset(i for i in listed if isinstance(i, tuple)))


def fair_share(items: int, workers: int) -> int:
    """The most items a worker holds once balanced: ``ceil(items / workers)``."""
    return math.ceil(items / workers) if workers else items
