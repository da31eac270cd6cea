"""Procedural and reasoning memory (a mixin of ``Memory``): procedures as chains of steps with
their versions and outcomes, and agent runs (traces) with their steps, tool calls and what
they teach. The rules live in ``graphmem.lifecycle.chains`` and ``.runs``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from ..errors import ValidationError
from ..lifecycle import check, checked_namespace
from ..lifecycle.chains import ChainBuilder, Change, migrate_chains
from ..lifecycle.runs import RunRecorder
from ..models import (
    Procedure, ProcedureStep, SimilarTrace, Status, ToolInvocation, ToolStats, Trace, TraceStep, TraceView, utcnow,
)
from ..models.fields import Metadata, SESSION_ID
from ..models.records import ToolStatus
from .guard import guarded, retried, whole

_METADATA = TypeAdapter(Metadata)


@guarded
class ProceduralMixin:
    def _start_procedural(self) -> None:
        self._chains = ChainBuilder(self._parts)
        self._runs = RunRecorder(self._parts, self._chains)
        with self._parts.write_lock:
            migrate_chains(self._parts, self._chains, utcnow())  # once per store: procedures stored as a list

    def _write(self, namespace: str, change: Change) -> None:
        change.write(self.store, namespace, self.embedder.dim)

    # procedures ------------------------------------------------------------------------------
    def add_procedure(
        self, task: str, steps: Sequence[str], *, importance: float = 0.6, confidence: float = 1.0,
        namespace: str = "default",
    ) -> Procedure:
        """Store a workflow: the task it serves and its ordered steps, as a chain of Step nodes.
        The same task with the same steps again raises the stored one's ``seen_count``; with other
        steps it is a new version that SUPERSEDES the old one (``history`` shows both)."""
        namespace = checked_namespace(namespace)
        if isinstance(steps, str) or not all(isinstance(s, str) for s in steps):
            raise ValidationError("steps must be a list of strings")

        def write() -> Procedure:
            with self._parts.write_lock, self._op("add_procedure", namespace):
                proc, change, _ = self._chains.procedure(namespace, task, steps, utcnow(), importance=importance,
                                                         confidence=confidence)
                self._write(namespace, change)
            return proc

        return retried(write)  # a step's name another process made meanwhile: resolved again

    def _procedure(self, namespace: str, procedure_id: str) -> Procedure:
        return self._runs.load(checked_namespace(namespace), procedure_id, Procedure, "procedure")

    def procedure_steps(self, procedure_id: str, *, namespace: str = "default") -> list[ProcedureStep]:
        """A procedure's Step nodes in order, with their failure counts."""
        proc = self._procedure(namespace, procedure_id)
        found = {s.id: s for s in self.store.get(namespace, [s.id for s in proc.steps])}
        return [found[s.id] for s in proc.steps if s.id in found]

    def next_step(self, procedure_id: str, *, after: int | str, namespace: str = "default") -> ProcedureStep | None:
        """The step that follows ``after`` (a step's number, id, or words close to its text) in a
        procedure; None after the last step."""
        proc = self._procedure(namespace, procedure_id)
        at = self._runs.step_number(namespace, proc, after)
        if at == len(proc.steps):
            return None
        return self._runs.load(namespace, proc.steps[at].id, ProcedureStep, "step")

    def record_outcome(self, procedure_id: str, success: bool, *, failed_step: int | str | None = None,
                       namespace: str = "default") -> Procedure:
        """An outcome the application saw when a procedure was followed: its success or failure
        count rises, and a failed step's (its number, id or text) too."""
        if not isinstance(success, bool):
            raise ValidationError("success must be true or false")
        if success and failed_step is not None:
            raise ValidationError("failed_step is only taken with success=False")

        def write() -> Procedure:
            with self._parts.write_lock, self._op("record_outcome", namespace):
                proc = self._procedure(namespace, procedure_id)
                at = self._runs.step_number(namespace, proc, failed_step) if failed_step is not None else None
                change = self._runs.outcome(namespace, proc, success, at, utcnow())
                self._write(namespace, change)
                return change.nodes[0]

        return retried(write)

    # traces ----------------------------------------------------------------------------------
    def start_trace(self, task: str, *, session_id: str | None = None, metadata: dict[str, Any] | None = None,
                    user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                    namespace: str = "default") -> Trace:
        """Begin recording an agent run on ``task``, linked to a session when given (made when it
        does not exist yet, as its first turn would make it); its user and agent are the session's
        unless given."""
        namespace = checked_namespace(namespace)
        scope = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        session_id = check(SESSION_ID, session_id, "session_id") if session_id is not None else None
        metadata = check(_METADATA, metadata or {}, "metadata")

        def write() -> Trace:
            with self._parts.write_lock, self._op("start_trace", namespace):
                change = self._runs.start(namespace, task, session_id, metadata, utcnow(), scope)
                self._write(namespace, change)
            return change.nodes[0]

        return retried(write)

    def add_step(self, trace_id: str, *, thought: str | None = None, action: str | None = None,
                 observation: str | None = None, namespace: str = "default") -> TraceStep:
        """The run's next step: numbered 1, 2, 3... without gaps, even with writers in other processes."""
        fields = {k: v for k, v in (("thought", thought), ("action", action), ("observation", observation))
                  if v is not None}
        namespace = checked_namespace(namespace)

        def write() -> TraceStep:
            with self._parts.write_lock, self._op("add_step", namespace):
                trace = self._runs.load(namespace, trace_id, Trace, "trace")
                change = self._runs.step(namespace, trace, fields, utcnow())
                self._write(namespace, change)
                return change.nodes[1]

        return retried(write)

    def add_tool_call(self, step_id: str, tool: str, arguments: dict[str, Any] | None = None, *,
                      result: str | None = None, status: ToolStatus = "success", duration_ms: float | None = None,
                      namespace: str = "default") -> ToolInvocation:
        """A tool call a trace step made: the tool, its arguments (JSON), result, status
        (success, failure, error, timeout, cancelled; pending until ``finish_tool_call``) and duration."""
        namespace = checked_namespace(namespace)
        fields = {"tool": tool, "arguments": arguments or {}, "result": result, "status": status,
                  "duration_ms": duration_ms}
        with self._parts.write_lock, self._op("add_tool_call", namespace):
            step = self._runs.load(namespace, step_id, TraceStep, "trace step")
            change = self._runs.tool_call(namespace, step, fields, utcnow())
            self._write(namespace, change)
        return change.nodes[0]

    def finish_tool_call(self, call_id: str, *, status: ToolStatus, result: str | None = None,
                         duration_ms: float | None = None, namespace: str = "default") -> ToolInvocation:
        """Finish a call recorded as ``pending``: its final status, and its result and duration
        when given. A finished call is not changed again."""
        namespace = checked_namespace(namespace)
        if status == "pending":
            raise ValidationError("finish_tool_call needs a final status, not pending")
        fields = {"status": status} | {k: v for k, v in (("result", result), ("duration_ms", duration_ms)) if v is not None}

        def write() -> ToolInvocation:
            with self._parts.write_lock, self._op("finish_tool_call", namespace):
                call = self._runs.load(namespace, call_id, ToolInvocation, "tool call")
                if call.status != "pending":
                    raise ValidationError(f"tool call {call_id} is already finished ({call.status})")
                done = check(ToolInvocation, call.model_dump() | fields | {"updated_at": utcnow()}, "tool call")
                self.store.put(namespace, [done], expect={call_id: call.updated_at})
                return done

        return retried(write)

    def complete_trace(self, trace_id: str, *, outcome: str = "", success: bool,
                       namespace: str = "default") -> Trace:
        """Finish a run. A success that follows a stored procedure reinforces it; the same task
        solved ``procedures.learn_after`` times with resembling steps becomes a procedure; a
        failure counts against the procedure and the step it failed at. ``procedure_id`` on the
        returned trace names the procedure it touched."""
        if not isinstance(success, bool):
            raise ValidationError("success must be true or false")
        namespace = checked_namespace(namespace)

        def write() -> Trace:
            with self._parts.write_lock, self._op("complete_trace", namespace):
                trace = self._runs.load(namespace, trace_id, Trace, "trace")
                done, change = self._runs.complete(namespace, trace, outcome, success, utcnow())
                self._write(namespace, change)
                return done

        return retried(write)

    def get_trace(self, trace_id: str, *, namespace: str = "default") -> TraceView:
        """A trace with its steps in order and each step's tool calls."""
        namespace = checked_namespace(namespace)
        return self._runs.view(namespace, self._runs.load(namespace, trace_id, Trace, "trace"))

    def list_traces(self, *, session_id: str | None = None, limit: int = 20, namespace: str = "default") -> list[Trace]:
        """Traces, newest first (one session's when given)."""
        namespace, limit = checked_namespace(namespace), whole("limit", limit, 1, 10_000)
        return self.store.query(namespace, "trace", session_id=session_id, limit=limit)

    def similar_traces(self, task: str, *, k: int = 5, success_only: bool = False,
                       namespace: str = "default") -> list[SimilarTrace]:
        """Past runs nearest in meaning to ``task`` (their task and outcome), best first."""
        namespace, k = checked_namespace(namespace), whole("k", k, 1, 1000)
        if not isinstance(task, str) or not task.strip():
            raise ValidationError("task must be a non-empty string")
        vec = self.embedder.embed([task], query=True)[0]
        hits = self.store.vector_search(namespace, "trace", vec, k * 4 if success_only else k, [Status.active])
        found = {t.id: t for t in self.store.get(namespace, [i for i, _ in hits])}
        out = [SimilarTrace(trace=found[i], similarity=float(np.clip(s, -1, 1))) for i, s in hits if i in found
               and (found[i].success or not success_only)]
        return out[:k]

    def tool_stats(self, *, namespace: str = "default") -> list[ToolStats]:
        """Per tool: calls, successes, failures, errors, success rate, mean and p95 duration."""
        return self._runs.tool_stats(checked_namespace(namespace))
