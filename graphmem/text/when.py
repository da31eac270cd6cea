"""Time in a query ("two months ago", "last Wednesday", "上周", "in May 2023", "on 30 August,
2023", "2023年5月18日") resolved to a span of time around a reference date, for time-aware
recall. English and Chinese; no model, a handful of patterns. Unknown phrasing resolves to
nothing, never to a guess."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo

_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
        "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "several": 3}
_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "几": 3}
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30.5, "year": 365.25}
_ZH_UNIT = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week", "个月": "month", "月": "month",
            "年": "year"}

_AGO = re.compile(r"\b(\d+|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                  r"twelve)\s+(day|week|month|year)s?\s+ago\b")
_LAST_UNIT = re.compile(r"\b(last|past|previous)\s+(week|month|year|weekend)\b")
_LAST_DAY = re.compile(r"\b(last|this|on)\s+(" + "|".join(_DAYS) + r")\b")
_MONTH_RE = "|".join(_MONTHS)
_MONTH = re.compile(r"\b(?:in|during|on|of|since)\s+(" + _MONTH_RE + r")(?:\s*,?\s*(\d{4}))?\b")
# a day of a month: "March 16, 2022", "16 March 2022", "the 1st of September", "2023-05-18"; "may"
# is a month only with an ordinal suffix or a year after its day ("may 2 people come" is no date)
_DATE = re.compile(rf"\b(?:(?P<m1>{_MONTH_RE})\s+(?P<d1>\d{{1,2}})(?P<o1>st|nd|rd|th)?"
                   rf"|(?:the\s+)?(?P<d2>\d{{1,2}})(?P<o2>st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH_RE}))"
                   r"(?:\s*,?\s*(?P<y>\d{4}))?(?![\w-])")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_ZH_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]+)月(\d{1,2}|[一二三四五六七八九十]+)[日号]")
_ZH_AGO = re.compile(r"(\d+|[一两二三四五六七八九十几]+)\s*(个星期|星期|个月|天|日|周|月|年)(?:之|以)?前")
_ZH_LAST_DAY = re.compile(r"(上|这)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_MONTH = re.compile(r"(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]+)月(?!份?前)")


def _zh_int(s: str) -> int:
    if s.isdigit():
        return int(s)
    if s.startswith("十"):
        return 10 + _ZH_NUM.get(s[1:], 0)
    if "十" in s:
        a, _, b = s.partition("十")
        return _ZH_NUM.get(a, 1) * 10 + _ZH_NUM.get(b, 0)
    return _ZH_NUM.get(s, 1)


def _day_span(day: datetime) -> tuple[datetime, datetime]:
    start = day.replace(hour=0, minute=0, second=0, microsecond=0)
    return start, start + timedelta(days=1)


def _around(center: datetime, unit: str) -> tuple[datetime, datetime]:
    """A tolerance window around an approximate time: a day, or half a unit either side."""
    if unit == "day":
        return _day_span(center)
    half = timedelta(days=_UNIT_DAYS[unit] / 2)
    return center - half, center + half


def _date(year: int | None, month: int, day: int, now: datetime) -> tuple[datetime, datetime] | None:
    """The day ``day`` of ``month`` (of ``year``, else the last one not after ``now``); the
    month where it has no such day ("February 30, 2023"); None for no month."""
    if not 1 <= month <= 12:
        return None
    if year is None:
        year = now.year if (month, day) <= (now.month, now.day) else now.year - 1
    try:
        return _day_span(datetime(year, month, day, tzinfo=now.tzinfo))
    except ValueError:
        return _month_span(year, month, now.tzinfo)


def _explicit_date(query: str, q: str, now: datetime) -> tuple[datetime, datetime] | None:
    """A day the query names by its date, in English or Chinese."""
    if m := _ISO_DATE.search(q):
        return _date(int(m.group(1)), int(m.group(2)), int(m.group(3)), now)
    for m in _DATE.finditer(q):
        name, day, suffix = (m["m1"], m["d1"], m["o1"]) if m["m1"] else (m["m2"], m["d2"], m["o2"])
        if name == "may" and not (suffix or m["y"]):
            continue
        return _date(int(m["y"]) if m["y"] else None, _MONTHS.index(name) + 1, int(day), now)
    if m := _ZH_DATE.search(query):
        return _date(int(m.group(1)) if m.group(1) else None, _zh_int(m.group(2)), _zh_int(m.group(3)), now)
    return None


def _month_span(year: int, month: int, tz: tzinfo | None) -> tuple[datetime, datetime]:
    return datetime(year, month, 1, tzinfo=tz), datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)


def time_span(query: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The span of time the query refers to, relative to ``now`` (tz kept), or None."""
    q = query.casefold()
    tz = now.tzinfo
    if day := _explicit_date(query, q, now):
        return day
    if re.search(r"\byesterday\b|昨天|昨日", q):
        return _day_span(now - timedelta(days=1))
    if re.search(r"前天", q):
        return _day_span(now - timedelta(days=2))
    if m := _AGO.search(q):
        n = int(m.group(1)) if m.group(1).isdigit() else _NUM[m.group(1)]
        return _around(now - timedelta(days=n * _UNIT_DAYS[m.group(2)]), m.group(2))
    if m := _ZH_AGO.search(query):
        unit = _ZH_UNIT[m.group(2)]
        return _around(now - timedelta(days=_zh_int(m.group(1)) * _UNIT_DAYS[unit]), unit)
    if m := _LAST_DAY.search(q):
        back = (now.weekday() - _DAYS.index(m.group(2))) % 7
        back = back or (7 if m.group(1) == "last" else 0)
        return _day_span(now - timedelta(days=back))
    if m := _ZH_LAST_DAY.search(query):
        monday = now - timedelta(days=now.weekday() + (7 if m.group(1) == "上" else 0))
        return _day_span(monday + timedelta(days=_ZH_DAYS[m.group(2)]))
    if m := _LAST_UNIT.search(q):
        unit = "day" if m.group(2) == "weekend" else m.group(2)
        if m.group(2) == "weekend":
            saturday = now - timedelta(days=(now.weekday() - 5) % 7 or 7)
            return saturday.replace(hour=0, minute=0, second=0, microsecond=0), saturday + timedelta(days=2)
        return now - timedelta(days=_UNIT_DAYS[unit] * 1.5), now
    if re.search(r"上周|上星期|上个星期|上礼拜", query):
        return now - timedelta(days=10.5), now - timedelta(days=3.5)
    if re.search(r"上个月|上月", query):
        return now - timedelta(days=45), now - timedelta(days=15)
    if re.search(r"去年", query):
        return _around(now - timedelta(days=365), "year")
    if m := _MONTH.search(q):
        month = _MONTHS.index(m.group(1)) + 1
        year = int(m.group(2)) if m.group(2) else (now.year if month <= now.month else now.year - 1)
        return _month_span(year, month, tz)
    if m := _ZH_MONTH.search(query):
        month = _zh_int(m.group(2))
        if 1 <= month <= 12:
            year = int(m.group(1)) if m.group(1) else (now.year if month <= now.month else now.year - 1)
            return _month_span(year, month, tz)
    return None
