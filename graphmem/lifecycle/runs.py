"""Agent runs (reasoning traces) and what they teach: (:Trace)-[:HAS_STEP {order}]->(:TraceStep)
-[:NEXT]->(:TraceStep), (:TraceStep)-[:CALLED]->(:ToolCall)-[:OF_TOOL]->(:Tool),
(:Trace)-[:IN_SESSION]->(:Session), steps MENTION entities. A successful run that follows a
procedure reinforces it; a task solved ``learn_after`` times with resembling steps becomes a
procedure PRODUCED by those runs; a failed run counts against the procedure and its step."""

from __future__ import annotations

import collections
import hashlib
from datetime import datetime
from typing import Any

import numpy as np

from ..errors import NotFoundError, ValidationError
from ..models import (
    Edge, EdgeType, Procedure, ProcedureStep, Session, Status, Tool, ToolInvocation, ToolStats, Trace, TraceStep,
    TraceStepView, TraceView, embed_text,
)
from ..store.base import pages
from ..text import keywords, normalise_name
from .builders import EntityResolver
from .chains import ChainBuilder, Change, mention_edges, mentions_of, resemblance, task_similarity
from .parts import Parts, check


def tool_id(name: str) -> str:
    """One Tool node per name in a namespace: its id is the name's digest."""
    return "tol_" + hashlib.blake2b(normalise_name(name).encode(), digest_size=12).hexdigest()


class RunRecorder:
    """Nodes and edges of traces, and the procedure changes a finished trace makes. Reads the
    store, never writes it (the ``Memory`` facade writes under its lock)."""

    def __init__(self, parts: Parts, chains: ChainBuilder) -> None:
        self.parts = parts
        self.chains = chains

    @property
    def store(self):
        return self.parts.store

    def load(self, namespace: str, node_id: str, kind: type, what: str) -> Any:
        found = self.store.get(namespace, [node_id])
        if not found or not isinstance(found[0], kind):
            raise NotFoundError(f"no {what} {node_id!r} in namespace {namespace!r}")
        return found[0]

    def start(self, namespace: str, task: str, session_id: str | None, metadata: dict, now: datetime,
              scope: dict[str, str | None]) -> Change:
        """A trace (its user and agent: as given, else its session's), and the session when it
        does not exist yet (made as a first turn would make it, with that user and agent)."""
        out = Change()
        found = next(iter(self.store.get(namespace, [session_id])), None) if session_id is not None else None
        if found is not None and not isinstance(found, Session):
            raise ValidationError(f"id {session_id!r} is taken by a {found.kind} in this namespace")
        if found is not None:
            scope = {k: v or getattr(found, k, None) for k, v in scope.items()}
        trace = check(Trace, {"namespace": namespace, "task": task, "session_id": session_id, "metadata": metadata,
                               "created_at": now, "updated_at": now, **scope}, "trace")
        trace.keywords = keywords(trace.task)
        out.add(trace, self.parts.embedder.embed([embed_text(trace)])[0])
        if session_id is not None:
            if found is None:
                out.add(check(Session, {"id": session_id, "namespace": namespace, "created_at": now, "updated_at": now,
                                        "user_id": scope.get("user_id"), "agent_id": scope.get("agent_id")},
                              "session_id"))
                out.expect[session_id] = None  # unless another writer made it meanwhile (then again, joining it)
            out.edges.append(Edge(namespace=namespace, source=trace.id, type=EdgeType.IN_SESSION, target=session_id))
        return out

    def step(self, namespace: str, trace: Trace, fields: dict[str, Any], now: datetime) -> Change:
        """The trace's next step (``order`` = steps so far + 1) and the trace counting it."""
        if trace.success is not None:
            raise ValidationError(f"trace {trace.id} is complete; start another trace for a new run")
        step = check(TraceStep, {**fields, "namespace": namespace, "trace_id": trace.id, "order": trace.step_count + 1,
                                 "created_at": now, "updated_at": now}, "trace step")
        resolver = EntityResolver(self.store, namespace, now)
        (named,) = mentions_of(self.parts, resolver, [" ".join(filter(None, (step.thought, step.action,
                                                                               step.observation)))])
        step.entities = [e.name for e in named]
        out = Change(expect={trace.id: trace.updated_at})  # no step numbered twice
        out.add(trace.model_copy(update={"step_count": step.order, "last_step_id": step.id, "updated_at": now}))
        out.add(step)
        out.add_entities(resolver, self.parts.embedder)
        out.edges.append(Edge(namespace=namespace, source=trace.id, type=EdgeType.HAS_STEP, target=step.id,
                              key=str(step.order), props={"order": step.order}))
        if trace.last_step_id:
            out.edges.append(Edge(namespace=namespace, source=trace.last_step_id, type=EdgeType.NEXT, target=step.id))
        out.edges += mention_edges(namespace, step.id, named)
        return out

    def tool_call(self, namespace: str, step: TraceStep, fields: dict[str, Any], now: datetime) -> Change:
        call = check(ToolInvocation, {**fields, "namespace": namespace, "trace_id": step.trace_id, "step_id": step.id,
                                      "created_at": now, "updated_at": now}, "tool call")
        out = Change()
        out.add(call)
        tid = tool_id(call.tool)
        if not self.store.get(namespace, [tid]):
            out.add(Tool(id=tid, namespace=namespace, name=call.tool, created_at=now, updated_at=now))
        out.edges += [Edge(namespace=namespace, source=step.id, type=EdgeType.CALLED, target=call.id),
                      Edge(namespace=namespace, source=call.id, type=EdgeType.OF_TOOL, target=tid)]
        return out

    def view(self, namespace: str, trace: Trace) -> TraceView:
        steps = self._steps(namespace, trace)
        calls: dict[str, list[ToolInvocation]] = {}
        called = self.store.edges(namespace, [s.id for s in steps], types=[EdgeType.CALLED])
        for call in self.store.get(namespace, [e.target for e in called]):
            calls.setdefault(call.step_id, []).append(call)
        return TraceView(trace=trace, steps=[TraceStepView(step=s, tool_calls=sorted(calls.get(s.id, []),
                                                                                       key=lambda c: c.id))
                                             for s in steps])

    def _steps(self, namespace: str, trace: Trace) -> list[TraceStep]:
        has = self.store.edges(namespace, [trace.id], types=[EdgeType.HAS_STEP])
        return sorted((s for s in self.store.get(namespace, [e.target for e in has]) if isinstance(s, TraceStep)),
                      key=lambda s: s.order)

    def tool_stats(self, namespace: str) -> list[ToolStats]:
        """Per tool: calls by status; the success rate and durations are of finished calls (not pending)."""
        calls: dict[str, list[ToolInvocation]] = {}
        for page in pages(self.store, namespace, "tool_call", 10_000):
            for c in page:
                calls.setdefault(c.tool, []).append(c)
        out = []
        for tool, made in calls.items():
            done = [c for c in made if c.status != "pending"]
            ms = np.array([c.duration_ms for c in done if c.duration_ms is not None], dtype=float)
            by = collections.Counter(c.status for c in made)
            out.append(ToolStats(tool=tool, calls=len(made), successes=by["success"], failures=by["failure"],
                                 errors=by["error"], timeouts=by["timeout"], cancelled=by["cancelled"],
                                 pending=by["pending"], success_rate=by["success"] / len(done) if done else 0.0,
                                 mean_ms=float(ms.mean()) if len(ms) else None,
                                 p95_ms=float(np.percentile(ms, 95)) if len(ms) else None))
        return sorted(out, key=lambda s: (-s.calls, s.tool))

    # what a finished run teaches -----------------------------------------------------------
    def complete(self, namespace: str, trace: Trace, outcome: str, success: bool, now: datetime) -> tuple[Trace, Change]:
        """The finished trace (re-embedded with its outcome) and the procedure changes it makes."""
        if trace.success is not None:
            raise ValidationError(f"trace {trace.id} is already complete")
        done = check(Trace, {**trace.model_dump(), "outcome": outcome, "success": success, "completed_at": now,
                             "updated_at": now}, "trace")
        done.keywords = keywords(f"{done.task} {done.outcome}")
        steps = self._steps(namespace, done)
        embedder, rules = self.parts.embedder, self.parts.settings.procedures
        vecs = embedder.embed([done.task, embed_text(done), *[s.text for s in steps]])
        task_vec, trace_vec, step_vecs = vecs[0], vecs[1], vecs[2:]
        out = Change(expect={trace.id: trace.updated_at})
        out.add(done, trace_vec)  # the branches below set its procedure_id in place
        proc = self.chains.same_task(namespace, done.task, task_vec, trace_vec)
        if proc is not None and success and steps and \
                resemblance(self.chains.step_vectors(namespace, proc), step_vecs, rules.step_match) >= rules.resemble:
            done.procedure_id = proc.id
            out.add(proc.model_copy(update={"seen_count": proc.seen_count + 1, "success_count": proc.success_count + 1,
                                            "updated_at": now}))
            out.expect[proc.id] = proc.updated_at
        elif proc is not None and not success:
            done.procedure_id = proc.id
            out.extend(self.outcome(namespace, proc, False, self._failed(namespace, steps, step_vecs, proc), now))
        elif success and steps:
            out.extend(self._learn(namespace, done, task_vec, step_vecs, steps, now))
        return done, out

    def _failed(self, namespace: str, steps: list[TraceStep], step_vecs: np.ndarray, proc: Procedure) -> int | None:
        """The procedure step a failed run failed at: the run's last step with a failed tool call
        (else its last step), matched to the procedure's steps by meaning."""
        if not steps:
            return None
        called = self.store.edges(namespace, [s.id for s in steps], types=[EdgeType.CALLED])
        bad = {c.step_id for c in self.store.get(namespace, [e.target for e in called])
               if isinstance(c, ToolInvocation) and c.status != "success"}
        at = max((i for i, s in enumerate(steps) if s.id in bad), default=len(steps) - 1)
        sims = self.chains.step_vectors(namespace, proc) @ step_vecs[at]
        best = int(np.argmax(sims))
        return best + 1 if sims[best] >= self.parts.settings.procedures.step_match else None

    def _learn(self, namespace: str, trace: Trace, task_vec: np.ndarray, step_vecs: np.ndarray,
               steps: list[TraceStep], now: datetime) -> Change:
        """A procedure from this run and the earlier successful runs of the same task whose steps
        resemble it, once there are ``learn_after`` of them."""
        rules = self.parts.settings.procedures
        hits = self.store.vector_search(namespace, "trace", task_vec, 20, [Status.active])
        earlier = [t for t in self.store.get(namespace, [i for i, _ in hits if i != trace.id])
                   if isinstance(t, Trace) and t.success and t.procedure_id is None]
        if earlier:
            sims = task_similarity(self.parts.embedder, trace.task, [t.task for t in earlier])
            earlier = [t for t, s in zip(earlier, sims) if s >= rules.task_match]
        alike = []
        for t in earlier:
            theirs = self._steps(namespace, t)
            if theirs and resemblance(self.parts.embedder.embed([s.text for s in theirs]), step_vecs,
                                      rules.step_match) >= rules.resemble:
                alike.append(t)
        if 1 + len(alike) < rules.learn_after:
            return Change()
        runs = [*alike, trace]
        task = min((t.task for t in runs), key=len)  # the plainest wording of the task
        proc, out, verdict = self.chains.procedure(namespace, task, [s.text for s in steps], now,
                                                   importance=0.6, confidence=0.8, learned_from=[t.id for t in runs])
        if verdict != "reinforced":  # the node in ``out``: seen and succeeded once per run it was learned from
            proc.seen_count = proc.success_count = len(runs)
        trace.procedure_id = proc.id
        out.edges += [Edge(namespace=namespace, source=t.id, type=EdgeType.PRODUCED, target=proc.id) for t in runs]
        for t in alike:
            out.add(t.model_copy(update={"procedure_id": proc.id, "updated_at": now}))
            out.expect[t.id] = t.updated_at
        return out

    def outcome(self, namespace: str, proc: Procedure, success: bool, failed_step: int | None,
                now: datetime) -> Change:
        """An outcome reported for a procedure: its success or failure count, and the failed step's."""
        out = Change(expect={proc.id: proc.updated_at})
        counts = {"success_count": proc.success_count + 1} if success else {"failure_count": proc.failure_count + 1}
        out.add(proc.model_copy(update={**counts, "updated_at": now}))
        if not success and failed_step is not None:
            step = self.load(namespace, proc.steps[failed_step - 1].id, ProcedureStep, "step")
            out.add(step.model_copy(update={"failure_count": step.failure_count + 1, "updated_at": now}))
            out.expect[step.id] = step.updated_at
        return out

    def step_number(self, namespace: str, proc: Procedure, step: int | str) -> int:
        """A step of ``proc`` given by its order, its id or words close to its text -> its order."""
        if isinstance(step, bool) or not isinstance(step, (int, str)):
            raise ValidationError("a step is its number (1-based), its id or its text")
        if isinstance(step, int):
            if not 1 <= step <= len(proc.steps):
                raise ValidationError(f"procedure {proc.id} has steps 1-{len(proc.steps)}; got {step}")
            return step
        ids = [s.id for s in proc.steps]
        if step in ids:
            return ids.index(step) + 1
        if not step.strip():
            raise ValidationError("a step text must not be empty")
        wanted = normalise_name(step)
        for i, s in enumerate(proc.steps, 1):
            if wanted and wanted in normalise_name(s.text):
                return i
        sims = self.chains.step_vectors(namespace, proc) @ self.parts.embedder.embed([step], query=True)[0]
        best = int(np.argmax(sims))
        if sims[best] < 0.5:
            raise NotFoundError(f"no step of procedure {proc.id} is like {step!r}")
        return best + 1

