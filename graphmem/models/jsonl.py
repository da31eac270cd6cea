"""JSONL input: one reader for every line-oriented input (messages to append, exports to
import), so each reports bad lines the same way: by line number, all of them, before
anything is written."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import ValidationError as PydanticValidationError

from ..errors import GraphMemError, ImportFormatError
from .inputs import MessageIn
from .records import SESSION_ID

T = TypeVar("T")


def read_jsonl(lines: Iterable[str], parse: Callable[[dict[str, Any]], T]) -> tuple[list[T], list[ImportFormatError]]:
    """``parse`` each non-blank line's JSON object; returns the results and one error per bad line."""
    rows: list[T] = []
    errors: list[ImportFormatError] = []
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("a line must be a JSON object")
            rows.append(parse(data))
        except (ValueError, TypeError, PydanticValidationError, GraphMemError) as exc:
            msg = exc.errors()[0]["msg"] if isinstance(exc, PydanticValidationError) else str(exc)
            errors.append(ImportFormatError(lineno, msg))
    return rows, errors


def refuse_bad_lines(errors: list[ImportFormatError], what: str) -> None:
    """Raise one ImportFormatError naming the first five bad lines, if there are any."""
    if errors:
        detail = "; ".join(str(e) for e in errors[:5])
        raise ImportFormatError(errors[0].line, f"{len(errors)} bad line(s), nothing {what}: {detail}")


def read_messages(lines: Iterable[str], session: str | None) -> list[tuple[str, MessageIn]]:
    """(session_id, message) pairs of a JSONL of messages (``{role, content, speaker?,
    created_at?, session_id?}``); ``session`` serves lines without a session_id."""

    def parse(data: dict[str, Any]) -> tuple[str, MessageIn]:
        sid = data.pop("session_id", None) or session
        if not sid:
            raise ValueError("no session_id on the line and no session given")
        return SESSION_ID.validate_python(str(sid)), MessageIn.model_validate(data)  # all lines before any write

    rows, errors = read_jsonl(lines, parse)
    refuse_bad_lines(errors, "added")
    return rows
