"""A model's crontab(5) expression as APScheduler 3 cron fields.

Two crontab rules APScheduler 3 does not share, handled here:
- day of week: crontab counts 0 (and 7) as Sunday, APScheduler 0 as Monday — numbers become
  day names;
- when day of month and day of week are both restricted, crontab runs when EITHER matches,
  APScheduler when both do — such an expression becomes two triggers, combined with OR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.model.durations import check_cron

if TYPE_CHECKING:
    from mvlattice.model.loader import Model

DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def cron_fields(expression: str) -> tuple[dict[str, str], ...]:
    """One field set (or two, to be OR-ed) for `apscheduler.triggers.cron.CronTrigger`."""
    check_cron(expression)
    minute, hour, day, month, weekday = expression.split()
    base = {"minute": minute, "hour": hour, "month": month.lower()}
    days = day_names(weekday)
    if not day.startswith("*") and not weekday.startswith("*"):
        return ({**base, "day": day, "day_of_week": "*"}, {**base, "day": "*", "day_of_week": days})
    return ({**base, "day": day, "day_of_week": days},)


def day_names(field: str) -> str:
    """A crontab day-of-week field as APScheduler day names ('1-5' -> 'mon,tue,wed,thu,fri')."""
    if field == "*":
        return "*"
    days: set[int] = set()
    for part in field.lower().split(","):
        days.update(_expand(part))
    if len(days) == 7:
        return "*"
    return ",".join(DAYS[d] for d in sorted(days, key=lambda d: (d - 1) % 7))


def _expand(part: str) -> set[int]:
    base, _, step = part.partition("/")
    stride = int(step) if step else 1
    if base == "*":
        low, high = 0, 6
    else:
        first, _, last = base.partition("-")
        low = _day(first)
        high = _day(last) if last else (7 if step else low)
    return {d % 7 for d in range(low, high + 1, stride)}


def _day(text: str) -> int:
    return int(text) if text.isdigit() else DAYS.index(text)


@dataclass(frozen=True, slots=True)
class ScheduledTarget:
    """What one cron job refreshes: a whole lattice or one materialization."""

    kind: str  # lattice | materialization
    name: str  # lattice name, or the materialization's table (schema.table)
    cron: str


def scheduled_targets(model: Model) -> tuple[ScheduledTarget, ...]:
    """Every lattice and materialization of the model with a `refresh: {cron: …}`."""
    found = [
        ScheduledTarget("lattice", lat.name, lat.refresh.cron)
        for lat in model.lattices
        if lat.refresh.cron
    ]
    found += [
        ScheduledTarget("materialization", f"{m.schema}.{m.table}", m.cron)
        for m in model.materializations
        if m.cron
    ]
    return tuple(found)
