"""OpenTelemetry spans, through ``opentelemetry-api`` only: every public ``Memory`` call
(``graphmem.recall``, ``graphmem.context``, ``graphmem.add_messages``, ...), every store call
(``graphmem.store.vector_search``, ...) and every extraction window
(``graphmem.extraction.window``). Without an OpenTelemetry SDK configured by the application
these are no-ops: graphmem sends nothing anywhere and exports nothing itself."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from opentelemetry import trace

tracer = trace.get_tracer("graphmem")
F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)


def spanned(name: str, namespace_arg: int | None = None) -> Callable[[F], F]:
    """Run the function in a span ``name``; its ``namespace`` (a keyword, or the positional
    argument ``namespace_arg``) becomes the attribute ``graphmem.namespace``."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
                return fn(*args, **kwargs)  # no SDK configured: not even a no-op span (4.5 us each)
            with tracer.start_as_current_span(name) as span:
                if span.is_recording():
                    ns = kwargs.get("namespace")
                    if ns is None and namespace_arg is not None and len(args) > namespace_arg:
                        ns = args[namespace_arg]
                    if isinstance(ns, str):
                        span.set_attribute("graphmem.namespace", ns)
                return fn(*args, **kwargs)

        return call  # type: ignore[return-value]

    return wrap


def traced_methods(prefix: str) -> Callable[[C], C]:
    """A span around each public method of the class (its mixins' too), named
    ``prefix.method``; the first argument after ``self`` is the namespace where it is a str."""

    def wrap(cls: C) -> C:
        for name in dir(cls):
            attr = inspect.getattr_static(cls, name)
            if not name.startswith("_") and inspect.isfunction(attr):
                setattr(cls, name, spanned(f"{prefix}.{name}", namespace_arg=1)(attr))
        return cls

    return wrap


def window_attributes(entry: dict[str, Any]) -> None:
    """What an extraction window did, on its span: session, turns, model calls and tokens, the
    questions about stored memories, memories added, merged and superseded, skipped or the error."""
    span = trace.get_current_span()
    if not span.is_recording():
        return
    span.set_attributes({
        "graphmem.session": entry["session"], "graphmem.window.start": entry["window"][0],
        "graphmem.window.end": entry["window"][1], "graphmem.extraction.calls": entry.get("calls", 0),
        "graphmem.extraction.prompt_tokens": entry.get("prompt_tokens", 0),
        "graphmem.extraction.output_tokens": entry.get("output_tokens", 0),
        "graphmem.extraction.skipped": bool(entry.get("skipped")),
        "graphmem.extraction.judged": entry.get("judged", 0),
        **{f"graphmem.extraction.{k}": len(entry.get(k) or []) for k in ("added", "merged", "superseded")},
    })
    if entry.get("error"):
        span.set_status(trace.Status(trace.StatusCode.ERROR, entry["error"]))
