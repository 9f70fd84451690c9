"""Moments: the one text form memoryctl writes a time in, and the dates other tools write.

A frontmatter date may be YAML's date or datetime, ISO text, epoch milliseconds, the
digits of a local time, or a wordy date; `parse_moment` reads each as memoryctl's ISO
text, and `dated_by` finds which of another tool's date keys a file is dated by.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any


def iso(moment: dt.datetime) -> str:
    """The one text form of a moment that memoryctl writes and sorts: UTC, seconds, `Z`."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    elif moment.tzinfo is not dt.UTC:
        moment = moment.astimezone(dt.UTC)
    # Written by hand, not by strftime, whose `%Y` gives "999" for the year 999 on some
    # systems: four digits always, so the text is ISO and sorts as the moments do.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


def moment(text: str) -> dt.datetime:
    """memoryctl's ISO text back as an aware datetime, for writing it to frontmatter."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


# Dendron (and other JavaScript tools) write `created: 1636543453185`, milliseconds since
# 1970. Thirteen digits cover 1973 to 5138; a shorter number is no date.
_EPOCH_MS = (10**11, 10**14)


def is_epoch_ms(value: Any) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and _EPOCH_MS[0] <= value < _EPOCH_MS[1]
        and _compact_moment(value) is None
    )


def _compact_moment(value: int) -> dt.datetime | None:
    """`created: 20241229143052` (or `202412291430`), the digits of a local time as
    Obsidian's timestamp and Zettelkasten plugins write them: twelve or fourteen digits
    that read as a moment from 1900 to 2099 are that moment, not milliseconds (which
    would be a day of 1976 or of the 27th century)."""
    digits = str(value)
    if len(digits) not in (12, 14) or digits[:2] not in ("19", "20"):
        return None
    try:
        return dt.datetime.strptime(digits, "%Y%m%d%H%M%S" if len(digits) == 14 else "%Y%m%d%H%M")
    except ValueError:
        return None


def epoch_ms(moment: dt.datetime) -> int:
    return int(moment.timestamp()) * 1000


def dates_in_file_style(data: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`changes` with each new moment written the way the file already writes that key:
    a key the file holds as epoch milliseconds gets epoch milliseconds back."""
    return {
        key: epoch_ms(value)
        if isinstance(value, dt.datetime) and is_epoch_ms(data.get(key))
        else value
        for key, value in changes.items()
    }


def parse_moment(value: Any) -> str:
    """A frontmatter date or datetime as memoryctl's ISO text; ValueError if it is neither.

    A date alone means midnight UTC, and a time without a zone is read as UTC, so the
    order of memories never depends on the machine's time zone.
    """
    if isinstance(value, dt.datetime):
        return iso(value)
    if isinstance(value, dt.date):
        return iso(dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC))
    if is_epoch_ms(value):
        return iso(dt.datetime.fromtimestamp(value / 1000, tz=dt.UTC))
    if isinstance(value, int) and not isinstance(value, bool):
        compact = _compact_moment(value)
        if compact is not None:
            return iso(compact)
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return parse_moment(dt.date.fromisoformat(text))
        try:
            return iso(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            pass
        wordy = _wordy_moment(text)
        if wordy is not None:
            return iso(wordy)
    raise ValueError(f"invalid date {value!r}")


# A date as Obsidian's Linter writes it by default ("Wednesday, January 3rd 2024, 2:30:12
# pm"), and the shorter forms its settings offer ("January 3rd 2024", "Jan 3, 2024").
_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_WORDY_DATE = re.compile(
    r"(?:[a-z]+,?\s+)?([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})"
    r"(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?)?",
    re.IGNORECASE,
)


def _wordy_moment(text: str) -> dt.datetime | None:
    match = _WORDY_DATE.fullmatch(text)
    if not match:
        return None
    name, day, year, hour, minute, second, half = match.groups()
    months = [m for m, full in enumerate(_MONTHS, 1) if full.startswith(name.casefold())]
    if len(months) != 1 or (len(name) < len(_MONTHS[months[0] - 1]) and len(name) != 3):
        return None
    hours = int(hour or 0)
    if half:
        if not 1 <= hours <= 12:
            return None
        hours = hours % 12 + (12 if half[0].lower() == "p" else 0)
    try:
        return dt.datetime(
            int(year), months[0], int(day), hours, int(minute or 0), int(second or 0),
            tzinfo=dt.UTC,
        )  # fmt: skip
    except ValueError:
        return None


# The keys other tools date a note by, read when memoryctl's own key is missing, first
# found first: Obsidian's Linter (`date created`, `date modified`), the plugins that
# keep `modified`, Quartz's and static sites' `date` and `lastmod`, and exports'
# `created_at`. They are kept in the file as written; memoryctl only reads them.
CREATED_KEYS = ("created", "date created", "creation date", "created_at", "date")
UPDATED_KEYS = (
    "updated", "date modified", "modified", "last modified", "lastmod", "last-modified",
    "updated_at",
)  # fmt: skip


def dated_by(data: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of `keys` whose value is a date; None when none is."""
    for key in keys:
        value = data.get(key)
        if value is None or value == "":
            continue
        try:
            parse_moment(value)
        except ValueError:
            continue
        return key
    return None
