"""Load a memory script (YAML), run its steps against a fresh store, check its expectations."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from ..errors import ValidationError
from ..extract.extractors import Extractor
from ..models import LAYERS, Layer, item_text, utcnow
from ..models.fields import UTCDateTime


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SessionStep(_Step):
    session: str
    at: UTCDateTime
    messages: list[tuple[str, str]] = Field(min_length=1)


class ForgetStep(_Step):
    forget: str


class RememberSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    importance: float = Field(default=0.5, ge=0, le=1)
    source: Literal["user_stated", "inferred", "observed"] = "user_stated"
    pinned: bool = False
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None


class RememberStep(_Step):
    remember: list[RememberSpec] = Field(min_length=1)


class MaintainSpec(BaseModel):
    """A maintenance run ``after_days`` from now (time travel), and what it must do."""

    model_config = ConfigDict(extra="forbid")
    after_days: float = Field(default=0, ge=0)
    dry_run: bool = False
    cap: int | None = Field(default=None, ge=1)
    merged: int | None = None
    expired: int | None = None
    capped: int | None = None
    purged: int | None = None


class RecallStep(_Step):
    recall: str
    k: int = Field(default=5, ge=1, le=100)
    includes: list[str] = Field(default_factory=list)
    excludes: list[str] = Field(default_factory=list)
    layer: Layer | None = None


class ContextStep(_Step):
    context: str
    budget: int = Field(default=400, ge=16)
    mentions: list[str] = Field(default_factory=list)
    omits: list[str] = Field(default_factory=list)
    stale: list[str] = Field(default_factory=list, description="every context line stating one of these says it "
                             "was superseded (an old value never reads as current)")


class HistoryStep(_Step):
    history: str
    superseded: list[str] = Field(min_length=1)


class MaintainStep(_Step):
    maintain: MaintainSpec


class TraceSpec(BaseModel):
    """An agent run: its task, the actions of its steps (each with one tool call) and its result."""

    model_config = ConfigDict(extra="forbid")
    task: str
    steps: list[str] = Field(min_length=1)
    success: bool = True
    fails_at: int | None = Field(default=None, ge=1, description="the step whose tool call failed")


class TraceRunStep(_Step):
    trace: TraceSpec


class NextStepSpec(BaseModel):
    """The step that follows ``after`` in the active procedure recalled for ``task`` contains ``expect``."""

    model_config = ConfigDict(extra="forbid")
    task: str
    after: str
    expect: str


class NextStepStep(_Step):
    next_step: NextStepSpec


class CountSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["memory", "episode", "procedure", "step", "trace", "entity", "message", "session"] = "memory"
    status: Literal["active", "superseded", "archived", "merged"] | None = None
    matching: str = ""
    equals: int | None = None
    at_least: int | None = None


class CountStep(_Step):
    count: CountSpec


Step = Union[SessionStep, ForgetStep, RememberStep, MaintainStep, RecallStep, ContextStep, HistoryStep, CountStep,
             TraceRunStep, NextStepStep]


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    steps: list[Step] = Field(min_length=1)


class ScriptResult(BaseModel):
    script: str
    step: int
    kind: str
    passed: bool
    detail: str


def load_script(path: Path) -> Script:
    import yaml

    try:
        return Script.model_validate(yaml.safe_load(Path(path).read_text(encoding="utf-8")))
    except (yaml.YAMLError, PydanticValidationError) as exc:
        raise ValidationError(f"{path}: not a valid memory script: {exc}") from exc


def _has(texts: list[str], needle: str) -> bool:
    return any(needle.casefold() in t.casefold() for t in texts)


def run_script(path: Path, extractor: Extractor, *, namespace: str = "script") -> list[ScriptResult]:
    """Run one script in a temporary store; one result per expectation (and per failed action)."""
    from ..engine import Memory
    from ..settings import Settings

    script = load_script(path)
    results: list[ScriptResult] = []

    def check(i: int, kind: str, ok: bool, detail: str) -> None:
        results.append(ScriptResult(script=script.name, step=i, kind=kind, passed=ok, detail=detail))

    with tempfile.TemporaryDirectory(prefix="graphmem-script-") as tmp:
        settings = Settings(extraction="manual", path=Path(tmp) / "script.db")
        with Memory(settings=settings, extractor=extractor) as mem:
            mem.store.set_meta(namespace, "script", script.name)  # the namespace exists from the start
            for i, step in enumerate(script.steps, 1):
                if isinstance(step, SessionStep):
                    mem.add_messages(step.session, [
                        {"speaker": who, "role": "assistant" if who == "assistant" else "user", "content": text,
                         "created_at": step.at + timedelta(minutes=n)}
                        for n, (who, text) in enumerate(step.messages)
                    ], namespace=namespace)
                    mem.flush()
                elif isinstance(step, ForgetStep):  # every memory, episode and message that mentions it
                    hits = [r.id for kind in ("memory", "episode", "message")
                            for r in mem.list(kind, namespace=namespace, limit=10_000)
                            if step.forget.casefold() in _text(r).casefold()]
                    if hits:
                        mem.forget(hits, namespace=namespace)
                    else:
                        check(i, "forget", False, f"nothing mentions {step.forget!r}")
                elif isinstance(step, RememberStep):
                    mem.remember_many([r.model_dump() for r in step.remember], namespace=namespace)
                elif isinstance(step, MaintainStep):
                    spec = step.maintain
                    (run,) = mem.maintain(namespace, dry_run=spec.dry_run, now=utcnow() + timedelta(days=spec.after_days),
                                          policy={"max_active_memories": spec.cap} if spec.cap else None)
                    wanted = {k: v for k in ("merged", "expired", "capped", "purged")
                              if (v := getattr(spec, k)) is not None}
                    got = {k: getattr(run, k) for k in wanted}
                    check(i, "maintain", got == wanted, f"after {spec.after_days:g} days: {got}" + (
                        "" if got == wanted else f", expected {wanted}"))
                elif isinstance(step, RecallStep):
                    layers = [step.layer] if step.layer else list(LAYERS)
                    items = mem.recall(step.recall, k=step.k, namespace=namespace, layers=layers, record_access=False)
                    texts = [s.text for s in items]
                    missing = [x for x in step.includes if not _has(texts, x)]
                    present = [x for x in step.excludes if _has(texts, x)]
                    check(i, "recall", not missing and not present,
                          f"{step.recall!r}: " + ("ok" if not missing and not present else
                                                   f"missing {missing}, unwanted {present}; got {texts}"))
                elif isinstance(step, ContextStep):
                    ctx = mem.context(step.context, budget=step.budget, namespace=namespace)
                    missing = [x for x in step.mentions if x.casefold() not in ctx.text.casefold()]
                    present = [x for x in step.omits if x.casefold() in ctx.text.casefold()]
                    present += [line for line in ctx.text.splitlines() for x in step.stale
                                if x.casefold() in line.casefold() and "(superseded on " not in line]
                    check(i, "context", not missing and not present and ctx.tokens <= step.budget,
                          f"{step.context!r}: {ctx.tokens}/{step.budget} tokens" + (
                              f"; missing {missing}, unwanted {present}" if missing or present else ""))
                elif isinstance(step, HistoryStep):
                    current = [m for m in mem.list("memory", status="active", namespace=namespace, limit=10_000)
                               if step.history.casefold() in m.text.casefold()]
                    olds = [o.text for m in current for o in mem.history(m.id, namespace=namespace).supersedes]
                    missing = [x for x in step.superseded if not _has(olds, x)]
                    check(i, "history", bool(current) and not missing,
                          f"{step.history!r} supersedes {olds}" if current else f"no active memory mentions {step.history!r}")
                elif isinstance(step, TraceRunStep):
                    t = step.trace
                    trace = mem.start_trace(t.task, namespace=namespace)
                    for n, action in enumerate(t.steps, 1):
                        made = mem.add_step(trace.id, action=action, namespace=namespace)
                        mem.add_tool_call(made.id, "shell", {"run": action}, namespace=namespace,
                                          status="failure" if n == t.fails_at else "success")
                    mem.complete_trace(trace.id, outcome="done" if t.success else "failed", success=t.success,
                                       namespace=namespace)
                elif isinstance(step, NextStepStep):
                    spec = step.next_step
                    hits = mem.recall(spec.task, k=1, layers=["procedure"], namespace=namespace, record_access=False)
                    after = mem.next_step(hits[0].item.id, after=spec.after, namespace=namespace) if hits else None
                    got = after.text if after is not None else None
                    check(i, "next_step", got is not None and spec.expect.casefold() in got.casefold(),
                          f"{spec.task!r} after {spec.after!r}: {got!r}" if hits else f"no procedure for {spec.task!r}")
                elif isinstance(step, CountStep):
                    c = step.count
                    rows = mem.list(c.kind, status=c.status, namespace=namespace, limit=10_000)
                    n = sum(1 for r in rows if c.matching.casefold() in _text(r).casefold())
                    ok = (c.equals is None or n == c.equals) and (c.at_least is None or n >= c.at_least)
                    check(i, "count", ok, f"{n} {c.kind}(s) matching {c.matching!r}")
    return results


def _text(record: Any) -> str:
    if record.kind in ("memory", "message", "episode", "procedure", "trace"):
        return item_text(record)
    if record.kind == "step":
        return record.text
    return getattr(record, "name", "") or getattr(record, "title", "")
