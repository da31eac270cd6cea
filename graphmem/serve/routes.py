"""The REST routes: each one reads its tenant (``app.tenant``/``app.writer``), calls ``Memory``
once and returns what it returns. Listings page by cursor; a namespace nothing was written to
yet lists as empty rather than 404 (a new tenant's first read is not an error)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ..errors import NotFoundError
from ..models import (Context, Entity, Episode, Explanation, History, Layer, MemoryIn, MemoryPatch, MemoryRecord, Message,
                      MessageIn, Neighbourhood, Procedure, ScoredItem, Session)
from ..models.records import Scope
from .app import PROBLEM_RESPONSES, Page, Problem, Tenant, paged, tenant, writer

router = APIRouter(responses=PROBLEM_RESPONSES)
Limit = Query(100, ge=1, le=1000, description="items per page")
UserId = Query(None, min_length=1, max_length=200, description="only this end user's records")
AgentId = Query(None, min_length=1, max_length=200, description="only this agent's records")
RunId = Query(None, min_length=1, max_length=200, description="only this run's records")
Cursor = Query(None, description="the next_cursor of the previous page")


def memory(request: Request):
    return request.app.state.memory


def listing(request: Request, who: Tenant, kind: str, limit: int, cursor: str | None, **filters: Any) -> Page[Any]:
    """One cursor page of ``Memory.list(kind, **filters)`` in the tenant's namespace."""
    mem = memory(request)
    return paged(lambda n, o: mem.list(kind, limit=n, offset=o, namespace=who.namespace, **filters), limit, cursor,
                 filters)


def of_kind(node: Any, kind: str, record_id: str) -> Any:
    if node.kind != kind:
        raise NotFoundError(f"{record_id!r} is a {node.kind}, not a {kind}")
    return node


class Deleted(BaseModel):
    deleted: int = Field(description="records removed, what was derived from them included")


# health ------------------------------------------------------------------------------------
@router.get("/health", tags=["health"])
def health() -> dict[str, Any]:
    """Liveness: the process answers (``pid``: which one, under ``graphmem serve --workers``)."""
    return {"status": "ok", "pid": os.getpid()}


@router.get("/ready", tags=["health"])
def ready(request: Request) -> dict[str, Any]:
    """Readiness: the store answers (a 503 problem when it does not)."""
    return {"status": "ready", "namespaces": len(memory(request).namespaces())}


# sessions and turns ------------------------------------------------------------------------
class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    title: str = ""
    metadata: dict[str, Any] | None = None


@router.post("/v1/sessions", status_code=201, tags=["sessions"])
def create_session(body: SessionCreate, request: Request, who: Tenant = Depends(writer)) -> Session:
    return memory(request).create_session(body.id, user_id=body.user_id, agent_id=body.agent_id, title=body.title,
                                          metadata=body.metadata, namespace=who.namespace)


@router.get("/v1/sessions", tags=["sessions"])
def list_sessions(request: Request, user_id: str | None = None, agent_id: str | None = None, limit: int = Limit,
                  cursor: str | None = Cursor, who: Tenant = Depends(tenant)) -> Page[Session]:
    mem = memory(request)
    return paged(lambda n, o: mem.list_sessions(user_id=user_id, agent_id=agent_id, limit=n, offset=o,
                                                namespace=who.namespace),
                 limit, cursor, {"user_id": user_id, "agent_id": agent_id})


@router.get("/v1/sessions/{session_id}", tags=["sessions"])
def get_session(session_id: str, request: Request, who: Tenant = Depends(tenant)) -> Session:
    return memory(request).get_session(session_id, namespace=who.namespace)


@router.delete("/v1/sessions/{session_id}", tags=["sessions"])
def forget_session(session_id: str, request: Request, derived: bool = True, who: Tenant = Depends(writer)) -> Deleted:
    """Forget a session, its turns and (``derived``) the episodes made from them. An unknown
    session is a 404, as an unknown memory is (the Python API's ``forget_session`` returns 0)."""
    mem = memory(request)
    mem.get_session(session_id, namespace=who.namespace)  # NotFoundError -> 404
    return Deleted(deleted=mem.forget_session(session_id, derived=derived, namespace=who.namespace))


class Append(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: list[MessageIn | str] = Field(min_length=1, description="turns in graphmem's or OpenAI's chat shape")
    wait: bool = Field(default=True, description="embed before answering (false: a background thread does)")


@router.post("/v1/sessions/{session_id}/messages", status_code=201, tags=["sessions"])
def add_messages(session_id: str, body: Append, request: Request, who: Tenant = Depends(writer)) -> list[Message]:
    """Append turns to a session (made on the first turn when it does not exist)."""
    return memory(request).add_messages(session_id, body.messages, wait=body.wait, namespace=who.namespace)


@router.get("/v1/sessions/{session_id}/messages", tags=["sessions"])
def list_messages(session_id: str, request: Request, limit: int = Limit, cursor: str | None = Cursor,
                  user_id: str | None = UserId, agent_id: str | None = AgentId, run_id: str | None = RunId,
                  who: Tenant = Depends(tenant)) -> Page[Message]:
    return listing(request, who, "message", limit, cursor, session_id=session_id, user_id=user_id,
                   agent_id=agent_id, run_id=run_id)


# memories ----------------------------------------------------------------------------------
@router.post("/v1/memories", status_code=201, tags=["memories"])
def remember(body: MemoryIn, request: Request, who: Tenant = Depends(writer)) -> MemoryRecord:
    """Store a memory as given. It is written as sent: it neither merges into a duplicate nor
    supersedes an older value (PATCH a memory to correct it: the new version supersedes the
    old one; maintenance folds duplicates). Extraction from turns does both."""
    return memory(request).remember_many([body], namespace=who.namespace)[0]


@router.get("/v1/memories", tags=["memories"])
def list_memories(request: Request, status: Literal["active", "superseded", "archived"] | None = None,
                  entity: str | None = None, category: str | None = None, session_id: str | None = None,
                  since: datetime | None = None, until: datetime | None = None, limit: int = Limit,
                  cursor: str | None = Cursor, user_id: str | None = UserId, agent_id: str | None = AgentId,
                  run_id: str | None = RunId, who: Tenant = Depends(tenant)) -> Page[MemoryRecord]:
    return listing(request, who, "memory", limit, cursor, status=status, entity=entity, category=category,
                   session_id=session_id, since=since, until=until, user_id=user_id, agent_id=agent_id, run_id=run_id)


@router.get("/v1/memories/{memory_id}", tags=["memories"])
def get_memory(memory_id: str, request: Request, who: Tenant = Depends(tenant)) -> MemoryRecord:
    return of_kind(memory(request).get(memory_id, namespace=who.namespace), "memory", memory_id)


class Correction(MemoryPatch):
    reason: str = Field(default="correction", max_length=500, description="why, kept in the memory's history")


@router.patch("/v1/memories/{memory_id}", tags=["memories"])
def update_memory(memory_id: str, body: Correction, request: Request, who: Tenant = Depends(writer)) -> MemoryRecord:
    """Change a memory. A new text or triple is a correction: a new version supersedes the old
    one (which stays in its history); other fields change in place."""
    fields = body.model_dump(exclude_unset=True, exclude={"reason"})
    return memory(request).update(memory_id, reason=body.reason, namespace=who.namespace, **fields)


@router.delete("/v1/memories/{memory_id}", tags=["memories"])
def forget_memory(memory_id: str, request: Request, derived: bool = True, who: Tenant = Depends(writer)) -> Deleted:
    mem = memory(request)
    of_kind(mem.get(memory_id, namespace=who.namespace), "memory", memory_id)
    return Deleted(deleted=mem.forget(memory_id, derived=derived, namespace=who.namespace))


@router.get("/v1/memories/{memory_id}/history", tags=["memories"])
def history(memory_id: str, request: Request, who: Tenant = Depends(tenant)) -> History:
    """What the memory superseded and what superseded it, with the reasons."""
    return memory(request).history(memory_id, namespace=who.namespace)


@router.get("/v1/records/{record_id}/explain", tags=["memories"])
def explain(record_id: str, request: Request, who: Tenant = Depends(tenant)) -> Explanation:
    """Why any record is in its state: the rule, its provenance and the edges around it."""
    return memory(request).explain(record_id, namespace=who.namespace)


# recall and context ------------------------------------------------------------------------
class RecallRequest(Scope):  # user_id, agent_id, run_id: never another's records
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=20_000)
    k: int = Field(default=10, ge=1, le=200)
    layers: list[Layer] | None = None
    include_superseded: bool | None = None
    include_archived: bool | None = None
    session_id: str | None = None
    as_of: datetime | None = Field(default=None, description="what was true then")
    record_access: bool | None = Field(default=None, description="count this read as a use (default true)")


@router.post("/v1/recall", tags=["recall"])
def recall(body: RecallRequest, request: Request, who: Tenant = Depends(tenant)) -> list[ScoredItem]:
    """The best items for a query, each with its five-factor breakdown, the signals that found
    it and, for a graph hit, the path."""
    args = body.model_dump(exclude={"query", "k"})
    if who.read_only:
        args["record_access"] = False  # a read-only key changes nothing, not even use counts
    return memory(request).recall(body.query, k=body.k, namespace=who.namespace, **args)


class ContextRequest(Scope):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=20_000)
    budget: int | None = Field(default=None, ge=50, le=200_000, description="tokens (default: the server's setting)")
    session_id: str | None = None
    k: int = Field(default=30, ge=1, le=200)


@router.post("/v1/context", tags=["recall"])
def context(body: ContextRequest, request: Request, who: Tenant = Depends(tenant)) -> Context:
    """A prompt block packed into a token budget: soul, summary, memories, episodes, turns."""
    return memory(request).context(body.query, budget=body.budget, session_id=body.session_id, k=body.k,
                                   namespace=who.namespace, record_access=False if who.read_only else None,
                                   user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id)


@router.delete("/v1/scopes", tags=["memories"])
def forget_scope(request: Request, user_id: str | None = UserId, agent_id: str | None = AgentId,
                 run_id: str | None = RunId, who: Tenant = Depends(writer)) -> dict[str, int]:
    """Forget everything of one end user, agent or run (sessions, turns, memories, episodes, runs)
    for good; at least one of the three. 0 when there is nothing."""
    if not (user_id or agent_id or run_id):
        raise Problem(422, "Unprocessable Entity", "give user_id, agent_id or run_id")
    return {"deleted": memory(request).forget(user_id=user_id, agent_id=agent_id, run_id=run_id,
                                              namespace=who.namespace)}


# entities, episodes, procedures ------------------------------------------------------------
@router.get("/v1/entities", tags=["graph"])
def find_entities(request: Request, query: str = Query(..., min_length=1, max_length=500), type: str | None = None,
                  k: int = Query(10, ge=1, le=200), who: Tenant = Depends(tenant)) -> list[Entity]:
    return memory(request).find_entities(query, type=type, k=k, namespace=who.namespace)


@router.get("/v1/entities/{entity}", tags=["graph"])
def get_entity(entity: str, request: Request, who: Tenant = Depends(tenant)) -> Entity:
    """An entity by id or name."""
    return memory(request).get_entity(entity, namespace=who.namespace)


@router.get("/v1/entities/{entity}/neighbourhood", tags=["graph"])
def neighbourhood(entity: str, request: Request, depth: int = Query(1, ge=1, le=3), limit: int = Query(50, ge=1, le=500),
                  who: Tenant = Depends(tenant)) -> Neighbourhood:
    """The records and entities around an entity, up to ``depth`` hops."""
    return memory(request).neighbourhood(entity, depth=depth, limit=limit, namespace=who.namespace)


@router.get("/v1/episodes", tags=["graph"])
def list_episodes(request: Request, session_id: str | None = None, limit: int = Limit, cursor: str | None = Cursor,
                  who: Tenant = Depends(tenant)) -> Page[Episode]:
    return listing(request, who, "episode", limit, cursor, session_id=session_id)


class EpisodeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    summary: str = Field(min_length=1)
    session_id: str | None = None
    message_ids: list[str] = Field(default_factory=list, description="the turns it covers")
    memory_ids: list[str] = Field(default_factory=list, description="the memories it produced")
    importance: float = Field(default=0.5, ge=0, le=1)


@router.post("/v1/episodes", status_code=201, tags=["graph"])
def add_episode(body: EpisodeIn, request: Request, who: Tenant = Depends(writer)) -> Episode:
    """Record what happened in a stretch of conversation, linked to its turns and memories."""
    return memory(request).add_episode(body.summary, session_id=body.session_id, message_ids=body.message_ids,
                                       memory_ids=body.memory_ids, importance=body.importance, namespace=who.namespace)


@router.get("/v1/episodes/{episode_id}", tags=["graph"])
def get_episode(episode_id: str, request: Request, who: Tenant = Depends(tenant)) -> Episode:
    return of_kind(memory(request).get(episode_id, namespace=who.namespace), "episode", episode_id)


class ProcedureIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: str = Field(min_length=1, max_length=2000)
    steps: list[str] = Field(min_length=1, max_length=100)
    importance: float = Field(default=0.6, ge=0, le=1)


@router.post("/v1/procedures", status_code=201, tags=["graph"])
def add_procedure(body: ProcedureIn, request: Request, who: Tenant = Depends(writer)) -> Procedure:
    return memory(request).add_procedure(body.task, body.steps, importance=body.importance, namespace=who.namespace)


@router.get("/v1/procedures", tags=["graph"])
def list_procedures(request: Request, limit: int = Limit, cursor: str | None = Cursor,
                    who: Tenant = Depends(tenant)) -> Page[Procedure]:
    return listing(request, who, "procedure", limit, cursor)


@router.get("/v1/procedures/{procedure_id}", tags=["graph"])
def get_procedure(procedure_id: str, request: Request, who: Tenant = Depends(tenant)) -> Procedure:
    return of_kind(memory(request).get(procedure_id, namespace=who.namespace), "procedure", procedure_id)


# extraction, stats, export and import ------------------------------------------------------
@router.get("/v1/extraction", tags=["admin"])
def extraction_status(request: Request, who: Tenant = Depends(tenant)) -> dict[str, Any]:
    """Windows queued, running, done, skipped and failed (with the last error)."""
    return memory(request).extraction_status(namespace=who.namespace)


@router.post("/v1/extraction/flush", tags=["admin"])
def extraction_flush(request: Request, who: Tenant = Depends(writer)) -> dict[str, Any]:
    """Run the namespace's queued windows through the model now and report each one."""
    return {"windows": memory(request).extract(namespace=who.namespace)}


@router.get("/v1/stats", tags=["admin"])
def stats(request: Request, who: Tenant = Depends(tenant)) -> dict[str, Any]:
    return memory(request).stats(namespace=who.namespace)


@router.get("/v1/export", tags=["admin"], response_class=StreamingResponse,
            responses={200: {"content": {"application/x-ndjson": {}}, "description": "the namespace as JSONL"}})
def export(request: Request, vectors: bool = True, user_id: str | None = UserId, agent_id: str | None = AgentId,
           run_id: str | None = RunId, who: Tenant = Depends(tenant)) -> StreamingResponse:
    """The namespace as JSONL (a header line, nodes, edges), streamed; ``graphmem import`` or
    ``POST /v1/import`` reads it back. With a user, agent or run: only their records."""
    spool = tempfile.TemporaryFile("w+", encoding="utf-8")
    try:
        memory(request).export(spool, namespace=who.namespace, vectors=vectors, user_id=user_id, agent_id=agent_id,
                               run_id=run_id)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)

    def lines() -> Iterator[str]:
        with spool:
            yield from spool

    return StreamingResponse(lines(), media_type="application/x-ndjson",
                             headers={"Content-Disposition": f'attachment; filename="{who.namespace}.jsonl"'})


@router.post("/v1/import", tags=["admin"],
             openapi_extra={"requestBody": {"required": True, "content": {"application/x-ndjson": {
                 "schema": {"type": "string", "description": "an export's JSONL"}}}}})
async def import_(request: Request, skip_invalid: bool = False, who: Tenant = Depends(writer)) -> dict[str, Any]:
    """Read an export (JSONL) into this namespace, whatever namespace its lines name. All or
    nothing unless ``skip_invalid``."""
    try:
        text = (await request.body()).decode("utf-8-sig")  # the size limit bounds it
    except UnicodeDecodeError as exc:
        raise Problem(400, "Bad request", f"the body is not UTF-8 (byte {exc.start})") from None
    return await run_in_threadpool(memory(request).import_, text.splitlines(), namespace=who.namespace,
                                   skip_invalid=skip_invalid)


@router.get("/v1/graph", tags=["graph"])
def graph(request: Request, entity: str | None = Query(None, max_length=500), limit: int = Query(400, ge=10, le=5000),
          messages: bool = False, who: Tenant = Depends(tenant)) -> dict[str, Any]:
    """The namespace as a drawable graph (what /ui and ``graphmem viz`` draw): nodes with their
    fields and score factors, edges with their types; sampled around ``entity`` when large."""
    from ..viz import graph_data

    return graph_data(memory(request), who.namespace, entity=entity, limit=limit, messages=messages)


@router.get("/ui", tags=["graph"], response_class=HTMLResponse, include_in_schema=False)
def ui() -> HTMLResponse:
    """The graph view; it asks for an API key when the server has keys and draws /v1/graph."""
    from ..viz import render

    return HTMLResponse(render(None, "graph view"))


@router.get("/v1/namespace", tags=["admin"])
def whoami(who: Tenant = Depends(tenant)) -> Tenant:
    """The namespace this request acts in, and whether its key may write."""
    return who

