"""Small value syntaxes of the model: durations ("15m") and cron expressions ("0 3 * * *")."""

from __future__ import annotations

import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")

# minute hour day-of-month month day-of-week, as crontab(5) and APScheduler's from_crontab.
_CRON_FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
)
_NAMES = {
    "month": ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
    "day of week": ("sun", "mon", "tue", "wed", "thu", "fri", "sat"),
}


def parse_duration(value: object) -> float:
    """Seconds from a number of seconds or a string like '90s', '15m', '2h', '1d', '1w'."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string like '15m' or '2h'")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("a duration cannot be negative")
        return float(value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return float(match.group(1)) * _UNITS[match.group(2)]
    raise ValueError(f"'{value}' is not a duration; write seconds or e.g. '15m', '2h', '1d'")


def check_cron(expression: str) -> None:
    """Raise ValueError naming the bad field when `expression` is not a 5-field crontab line."""
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(
            f"cron expression '{expression}' must have 5 fields "
            f"(minute hour day-of-month month day-of-week), it has {len(fields)}"
        )
    for text, (name, low, high) in zip(fields, _CRON_FIELDS, strict=True):
        for part in text.split(","):
            if not _cron_part_ok(part.lower(), low, high, _NAMES.get(name, ())):
                raise ValueError(
                    f"cron expression '{expression}': bad {name} field '{text}' "
                    f"(allowed {low}-{high}, *, lists, ranges and /steps)"
                )


def _cron_part_ok(part: str, low: int, high: int, names: tuple[str, ...]) -> bool:
    base, _, step = part.partition("/")
    if step and not (step.isdigit() and int(step) > 0):
        return False
    if base == "*":
        return True
    bounds = base.split("-")
    if len(bounds) > 2:
        return False
    values = [_cron_value(b, low, names) for b in bounds]
    if any(v is None or not low <= v <= high for v in values):
        return False
    return len(values) == 1 or values[0] <= values[1]  # type: ignore[operator]


def _cron_value(text: str, low: int, names: tuple[str, ...]) -> int | None:
    if text.isdigit():
        return int(text)
    if text in names:
        return names.index(text) + (low if low == 1 else 0)
    return None
