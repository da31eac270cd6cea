"""JSONL input: one reader for every line-oriented input (messages to append, exports to
import), so each reports bad lines the same way: by line number, all of them, before
anything is written."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import ValidationError as PydanticValidationError

from ..errors import GraphMemError, ImportFormatError, ValidationError
from .inputs import MessageIn
from .fields import SESSION_ID

T = TypeVar("T")


def read_jsonl(lines: Iterable[str], parse: Callable[[dict[str, Any]], T]) -> tuple[list[T], list[ImportFormatError]]:
    """``parse`` each non-blank line's JSON object; returns the results and one error per bad line."""
    rows: list[T] = []
    errors: list[ImportFormatError] = []
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            try:
                data = json.loads(raw)
            except json.JSONDecodeError:
                raise ValueError("not valid JSON") from None
            if not isinstance(data, dict):
                raise ValueError("a line must be a JSON object")
            rows.append(parse(data))
        except (ValueError, TypeError, PydanticValidationError, GraphMemError) as exc:
            errors.append(ImportFormatError(lineno, _reason(exc)))
    return rows, errors


def _reason(exc: Exception) -> str:
    if isinstance(exc, PydanticValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(map(str, first['loc'])) or 'line'}: {first['msg']}"
    return str(exc)


def refuse_bad_lines(errors: list[ImportFormatError], what: str) -> None:
    """Raise one ImportFormatError for every bad line, each reason once with its line numbers."""
    if not errors:
        return
    groups: dict[str, list[int]] = {}
    for e in errors:
        groups.setdefault(e.reason, []).append(e.line)
    detail = "; ".join(f"{reason} ({_line_list(lines)})" for reason, lines in list(groups.items())[:8])
    more = f"; and {len(groups) - 8} other kinds" if len(groups) > 8 else ""
    raise ImportFormatError(errors[0].line, "", f"{len(errors)} bad line(s), nothing {what}: {detail}{more}")


def _line_list(lines: list[int]) -> str:
    """``line 3`` or ``lines 1-4, 9``: consecutive numbers as ranges, at most ten ranges."""
    spans: list[list[int]] = []
    for n in lines:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans[:10]) + (", ..." if len(spans) > 10 else "")
    return f"line {text}" if len(lines) == 1 else f"lines {text}"


def read_messages(lines: Iterable[str], session: str | None) -> list[tuple[str, MessageIn]]:
    """(session_id, message) pairs of a JSONL of messages (``{role, content, speaker?,
    created_at?, session_id?}``); ``session`` serves lines without a session_id."""

    seen: set[str] = set()

    def parse(data: dict[str, Any]) -> tuple[str, MessageIn]:
        sid = data.pop("session_id", None) or session
        if not sid:
            raise ValueError("no session_id on the line and no session given")
        try:
            sid = SESSION_ID.validate_python(str(sid))
        except PydanticValidationError as exc:
            raise ValueError(f"session_id {sid!r}: {exc.errors()[0]['msg']}") from None
        message = MessageIn.model_validate(data)  # all lines before any write
        if message.id is not None:
            if message.id in seen:
                raise ValueError(f"id {message.id!r} is on an earlier line too")
            seen.add(message.id)
        return sid, message

    rows, errors = read_jsonl(lines, parse)
    refuse_bad_lines(errors, "added")
    return rows


def read_text_messages(lines: Iterable[str], session: str, role: str, speaker: str | None) -> list[tuple[str, MessageIn]]:
    """(session_id, message) pairs of plain text: each non-blank line one message of ``role``."""
    rows: list[tuple[str, MessageIn]] = []
    errors: list[ImportFormatError] = []
    try:
        sid = SESSION_ID.validate_python(session)
    except PydanticValidationError as exc:
        raise ValidationError(f"session {session!r}: {exc.errors()[0]['msg']}") from None
    for lineno, raw in enumerate(lines, 1):
        if raw.strip():
            try:
                rows.append((sid, MessageIn(role=role, content=raw, **({"speaker": speaker} if speaker else {}))))
            except PydanticValidationError as exc:
                errors.append(ImportFormatError(lineno, _reason(exc)))
    refuse_bad_lines(errors, "added")
    return rows
