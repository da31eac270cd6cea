"""REST routes of procedural and reasoning memory: a procedure's steps, the step after one, its
outcomes; agent runs (traces) with their steps and tool calls; similar runs and tool statistics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ..models import Procedure, ProcedureStep, SimilarTrace, ToolInvocation, ToolStats, Trace, TraceStep, TraceView
from ..models.records import Scope, ToolStatus
from .app import PROBLEM_RESPONSES, Page, Tenant, tenant, writer
from .routes import Cursor, Limit, listing, memory

router = APIRouter(responses=PROBLEM_RESPONSES)


@router.get("/v1/procedures/{procedure_id}/steps", tags=["procedures"])
def procedure_steps(procedure_id: str, request: Request, who: Tenant = Depends(tenant)) -> list[ProcedureStep]:
    """A procedure's Step nodes in order, with how often each failed."""
    return memory(request).procedure_steps(procedure_id, namespace=who.namespace)


@router.get("/v1/procedures/{procedure_id}/next", tags=["procedures"])
def next_step(procedure_id: str, request: Request, after: str = Query(min_length=1, max_length=2000,
              description="a step's number, id or words close to its text"),
              who: Tenant = Depends(tenant)) -> ProcedureStep | None:
    """The step after ``after``; null after the last one."""
    return memory(request).next_step(procedure_id, after=int(after) if after.isdecimal() else after,
                                     namespace=who.namespace)


class OutcomeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    success: bool
    failed_step: int | str | None = Field(default=None, description="the step that failed: its number, id or text")


@router.post("/v1/procedures/{procedure_id}/outcome", tags=["procedures"])
def record_outcome(procedure_id: str, body: OutcomeIn, request: Request, who: Tenant = Depends(writer)) -> Procedure:
    """How following the procedure went; failures count against it and the step named."""
    return memory(request).record_outcome(procedure_id, body.success, failed_step=body.failed_step,
                                          namespace=who.namespace)


class TraceIn(Scope):
    model_config = ConfigDict(extra="forbid")
    task: str = Field(min_length=1, max_length=2000)
    session_id: str | None = None
    metadata: dict[str, Any] | None = None


class StepIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    thought: str | None = None
    action: str | None = None
    observation: str | None = None


class ToolCallIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str = Field(min_length=1, max_length=200)
    arguments: dict[str, Any] | None = None
    result: str | None = None
    status: ToolStatus = "success"
    duration_ms: float | None = Field(default=None, ge=0)


class CompleteIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    success: bool
    outcome: str = ""


@router.post("/v1/traces", status_code=201, tags=["traces"])
def start_trace(body: TraceIn, request: Request, who: Tenant = Depends(writer)) -> Trace:
    return memory(request).start_trace(body.task, session_id=body.session_id, metadata=body.metadata,
                                       user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
                                       namespace=who.namespace)


@router.get("/v1/traces", tags=["traces"])
def list_traces(request: Request, session_id: str | None = None, limit: int = Limit, cursor: str | None = Cursor,
                who: Tenant = Depends(tenant)) -> Page[Trace]:
    """Traces, newest first (one session's when asked)."""
    return listing(request, who, "trace", limit, cursor, session_id=session_id)


@router.get("/v1/traces/similar", tags=["traces"])
def similar_traces(request: Request, task: str = Query(min_length=1, max_length=2000), k: int = Query(5, ge=1, le=100),
                   success_only: bool = False, who: Tenant = Depends(tenant)) -> list[SimilarTrace]:
    """Past runs nearest in meaning to a task."""
    return memory(request).similar_traces(task, k=k, success_only=success_only, namespace=who.namespace)


@router.get("/v1/traces/{trace_id}", tags=["traces"])
def get_trace(trace_id: str, request: Request, who: Tenant = Depends(tenant)) -> TraceView:
    return memory(request).get_trace(trace_id, namespace=who.namespace)


@router.post("/v1/traces/{trace_id}/steps", status_code=201, tags=["traces"])
def add_step(trace_id: str, body: StepIn, request: Request, who: Tenant = Depends(writer)) -> TraceStep:
    return memory(request).add_step(trace_id, **body.model_dump(), namespace=who.namespace)


@router.post("/v1/traces/steps/{step_id}/tool-calls", status_code=201, tags=["traces"])
def add_tool_call(step_id: str, body: ToolCallIn, request: Request, who: Tenant = Depends(writer)) -> ToolInvocation:
    fields = body.model_dump()
    return memory(request).add_tool_call(step_id, fields.pop("tool"), fields.pop("arguments"), **fields,
                                         namespace=who.namespace)


class ToolCallDone(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status: ToolStatus = Field(description="the final status (not pending)")
    result: str | None = None
    duration_ms: float | None = Field(default=None, ge=0)


@router.patch("/v1/traces/tool-calls/{call_id}", tags=["traces"])
def finish_tool_call(call_id: str, body: ToolCallDone, request: Request, who: Tenant = Depends(writer)) -> ToolInvocation:
    """Finish a call recorded as pending."""
    return memory(request).finish_tool_call(call_id, **body.model_dump(), namespace=who.namespace)


@router.post("/v1/traces/{trace_id}/complete", tags=["traces"])
def complete_trace(trace_id: str, body: CompleteIn, request: Request, who: Tenant = Depends(writer)) -> Trace:
    """Finish a run; a success may reinforce or teach a procedure, a failure counts against one."""
    return memory(request).complete_trace(trace_id, outcome=body.outcome, success=body.success,
                                          namespace=who.namespace)


@router.get("/v1/tools/stats", tags=["traces"])
def tool_stats(request: Request, who: Tenant = Depends(tenant)) -> list[ToolStats]:
    """Per tool: calls, success rate, mean and p95 duration."""
    return memory(request).tool_stats(namespace=who.namespace)
