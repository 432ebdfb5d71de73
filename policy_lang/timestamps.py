"""RFC 3339 timestamps ('2026-11-27T02:13:35Z', '2026-11-27T03:13:35.5+01:00') to seconds since the epoch.

Shared by the checker (a literal given to ``time(...)`` is checked where it is written) and the
runtime library (annotations and conditions read while a session runs).  It accepts what
Kubernetes writes and reads with Go's ``time.Parse(time.RFC3339, s)``: a four-digit year, two-digit
fields, an upper-case ``T``, optional fractional seconds and a ``Z`` or ``±hh:mm`` offset.
"""

from __future__ import annotations

import calendar
import re

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})", re.ASCII)
LAYOUT = "2006-01-02T15:04:05Z07:00"


def rfc3339_seconds(text: str) -> float | None:
    """Seconds since the epoch, or None when text is not an RFC 3339 time (field out of range included)."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)
            and hour < 24 and minute < 60 and second < 60):
        return None
    offset = 0
    zone = match.group(8)
    if zone != "Z":
        zone_hours, zone_minutes = int(zone[1:3]), int(zone[4:6])
        if zone_hours >= 24 or zone_minutes >= 60:
            return None
        offset = (zone_hours * 3600 + zone_minutes * 60) * (1 if zone[0] == "+" else -1)
    whole = _days_since_epoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    fraction = match.group(7)
    return whole + (float(fraction) if fraction else 0.0)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if calendar.isleap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_since_epoch(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 in the proleptic Gregorian calendar (year 0 included, as Go allows it)."""
    shifted = year - (month <= 2)
    era = shifted // 400
    year_of_era = shifted - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468
