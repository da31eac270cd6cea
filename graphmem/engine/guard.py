"""The facade's edge. Counts and sizes are checked where they come in (``whole``); what bad
input can still raise further down (text that is not valid Unicode, pydantic's own error for
a record built from a bad value, input nested too deep to walk) leaves every public method of
``Memory`` as graphmem's ``ValidationError``, never as another library's exception. A
``TypeError``, ``AttributeError`` or ``OverflowError`` becomes one when an argument is not of its annotated type
(checked strictly, on the error path only); otherwise it is a bug and propagates as it is."""

from __future__ import annotations

import functools
import inspect
import random
import time
import typing
from typing import Any, Callable, TypeVar

from pydantic import ConfigDict, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from ..errors import GraphMemError, ValidationError, WriteRace
from ..lifecycle import describe
from ..telemetry import spanned

C = TypeVar("C", bound=type)
T = TypeVar("T")


def whole(name: str, value: Any, low: int, high: int) -> int:
    """An integer argument within [low, high] (``True`` and ``"5"`` are not integers)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an integer {low}..{high} (got {value!r:.40})")
    if not low <= value <= high:
        raise ValidationError(f"{name} must be {low}..{high} (got {value})")
    return value


@functools.cache
def _adapters(fn: Callable[..., Any]) -> dict[str, TypeAdapter]:
    """A strict pydantic adapter for each annotated parameter of ``fn`` that has one."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - a name only known to type checkers: no check for that method
        return {}
    out = {}
    for name, hint in hints.items():
        if name != "return":
            try:
                out[name] = TypeAdapter(hint, config=ConfigDict(strict=True, arbitrary_types_allowed=True))
            except Exception:  # noqa: BLE001 - a type pydantic cannot check (a file object, a callback)
                pass
    return out


def wrong_argument(fn: Callable[..., Any], args: tuple, kwargs: dict) -> str | None:
    """The first argument whose value is not of its annotated type, described; None if all are."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:  # a missing, unknown or surplus argument
        return str(exc)
    params = bound.signature.parameters
    for name, value in list(bound.arguments.items())[1:]:
        adapter = _adapters(fn).get(name)
        if adapter is None:
            continue
        try:
            adapter.validate_python(value)
        except Exception:  # noqa: BLE001 - pydantic's error, or a value it cannot even look at
            return f"{name} must be {params[name].annotation} (got {type(value).__name__} {value!r:.40})"
    return None


def _edge(fn: Callable[..., Any]) -> Callable[..., Any]:
    traced = spanned(f"graphmem.{fn.__name__}")(fn)

    @functools.wraps(fn)
    def method(*args: Any, **kwargs: Any) -> Any:
        try:
            return traced(*args, **kwargs)
        except GraphMemError:
            raise
        except (TypeError, AttributeError, OverflowError) as exc:  # a wrong type, or a bug: the annotations tell which
            wrong = wrong_argument(fn, args, kwargs)
            if wrong is None:
                raise
            raise ValidationError(f"{fn.__name__}: {wrong}") from exc
        except PydanticValidationError as exc:
            raise ValidationError(describe(exc, fn.__name__)) from exc
        except UnicodeError as exc:
            raise ValidationError(f"{fn.__name__}: text is not valid Unicode ({exc.reason})") from exc
        except RecursionError as exc:
            raise ValidationError(f"{fn.__name__}: input is nested too deeply") from exc

    return method


def guarded(cls: C) -> C:
    """Every public method of ``cls`` behind the edge."""
    for name, attr in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(attr):
            setattr(cls, name, _edge(attr))
    return cls


def retried(write: Callable[[], T], attempts: int = 50) -> T:
    """A read-modify-write run again while another writer (a process, a thread with its own
    ``Memory``) changed what it read first (``WriteRace``), with a short random back-off. Other
    conflicts (a name that means two entities) are the caller's to settle: raised at once."""
    for attempt in range(attempts - 1):
        try:
            return write()
        except WriteRace:
            time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
    return write()  # the last try's conflict reaches the caller
