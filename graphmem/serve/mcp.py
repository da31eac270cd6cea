"""The MCP face (the official ``mcp`` SDK): tools and resources over one ``Memory``, served on
stdio or streamable HTTP. The namespace is never a tool argument: on stdio it is the one the
server was started with; over HTTP it is the API key's (``graphmem keys``), or the configured
one on an open loopback server."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import BaseModel, Field

from ..errors import GraphMemError, ValidationError
from ..models import Layer, MessageIn
from ..models.records import ToolStatus
from .keys import KeyStore, token_of

INSTRUCTIONS = """graphmem is this agent's long-term memory of its users: facts and preferences (memories),
summaries of past conversations (episodes) and learned workflows (procedures), in a graph.
Call `context` with the task at hand before answering: it returns a prompt block within a token
budget. Call `add_messages` with each exchange so it can be remembered (facts are extracted in
the background), `remember` for a fact the user asks you to keep, `update` to correct one (the
old value stays in `history`), `forget` to delete one. `recall` returns ranked items with the
reason each was found. For multi-step work, `similar_traces` shows how past runs went; record
this run with `start_trace`, `add_trace_step` and `complete_trace`, and report how following a
procedure went with `record_outcome`."""


class Turn(BaseModel):
    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(description="what was said")
    speaker: str = Field(default="", description="who said it, e.g. the user's name")


class KeyVerifier:
    """The MCP SDK's token verifier over graphmem's API keys: over HTTP a connection without a
    valid key is refused with 401 before the handshake (the tool list included)."""

    def __init__(self, keys: KeyStore) -> None:
        self.keys = keys

    async def verify_token(self, token: str) -> AccessToken | None:
        key = await anyio.to_thread.run_sync(self.keys.verify, token)
        if key is None or key.admin:  # an admin key manages keys and reaches no namespace
            return None
        return AccessToken(token=token, client_id=key.id, scopes=["read"] if key.read_only else ["read", "write"],
                           claims={"namespace": key.namespace})


class Namespaces:
    """The namespace a tool call acts in, and whether it may write (checked at each call too: a
    server started open on loopback refuses calls without a key once keys are made)."""

    def __init__(self, namespace: str, keys: KeyStore | None) -> None:
        self.namespace, self.keys = namespace, keys

    def __call__(self, ctx: Context, write: bool = False) -> str:
        key = self._key(ctx)
        if key is None:
            return self.namespace  # stdio, or an open loopback HTTP server: the configured namespace
        if write and key.read_only:
            raise ValidationError("this API key is read-only")
        return key.namespace

    def read(self, ctx: Context) -> dict[str, Any]:
        """A read's namespace; a read-only key's reads change nothing, not even use counts."""
        key = self._key(ctx)
        return {"namespace": self.namespace} if key is None else \
            {"namespace": key.namespace, "record_access": False if key.read_only else None}

    def _key(self, ctx: Context) -> Any:
        headers = ctx.headers if ctx is not None else None
        if headers is None or self.keys is None or not self.keys.any():
            return None
        token = token_of(headers)
        key = self.keys.verify(token) if token else None
        if key is None or key.admin:
            raise ValidationError("a valid graphmem API key of a namespace is required (Authorization: Bearer <key>)")
        return key


F = TypeVar("F", bound=Callable[..., Any])


def _answers(error: type[Exception]) -> Callable[[F], F]:
    """graphmem's errors reach the client as the tool's (or resource's) error with their
    message; anything else stays a crash the SDK reports without its text."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except GraphMemError as exc:
                raise error(str(exc)) from None

        return call  # type: ignore[return-value]

    return wrap


tool_errors, resource_errors = _answers(ToolError), _answers(ResourceError)


def _item(s: Any) -> dict[str, Any]:
    return {"id": s.id, "layer": s.layer, "text": s.text, "score": round(s.score, 4), "matched_by": s.matched_by,
            "factors": s.breakdown.model_dump(exclude_none=True), "turns": s.turns}


def build(memory: Any, namespace: str = "default", keys: KeyStore | None = None, url: str | None = None) -> MCPServer:
    """An MCP server over ``memory`` (opened and closed by the caller). Served over HTTP at ``url``
    with keys made, every request needs one (the SDK's bearer authentication)."""
    from importlib.metadata import version

    auth = {}
    if url is not None and keys is not None and keys.any():
        auth = {"token_verifier": KeyVerifier(keys), "auth": AuthSettings(issuer_url=url, resource_server_url=None)}
    server = MCPServer("graphmem", instructions=INSTRUCTIONS, version=version("graphmem"), **auth)
    ns = Namespaces(namespace, keys)

    @server.tool()
    @tool_errors
    def remember(text: str, ctx: Context, subject: str | None = None, predicate: str | None = None,
                 object: str | None = None, category: str = "fact", importance: float = 0.5,
                 user_id: str | None = None) -> dict[str, Any]:
        """Store one memory as given, e.g. "Ana prefers green tea" (subject Ana, predicate prefers,
        object green tea). It is written as sent: it neither merges into a duplicate nor
        supersedes an older value; to change a memory use `update` (the new version supersedes
        the old one, which stays in its history)."""
        rec = memory.remember(text, subject=subject, predicate=predicate, object=object, category=category,
                              importance=importance, user_id=user_id, namespace=ns(ctx, write=True))
        return rec.model_dump(mode="json", include={"id", "text", "status", "subject", "predicate", "object"})

    @server.tool()
    @tool_errors
    def recall(query: str, ctx: Context, k: int = 10, layers: list[Layer] | None = None,
               user_id: str | None = None) -> list[dict[str, Any]]:
        """The k best memories, episodes, procedures and turns for a query, each with its score,
        the five factors behind it (relevance, importance, confidence, recency, frequency) and
        how it was found (vector, keyword, graph path). With `user_id`: never another user's."""
        return [_item(s) for s in memory.recall(query, k=k, layers=layers, user_id=user_id, **ns.read(ctx))]

    @server.tool()
    @tool_errors
    def context(query: str, ctx: Context, budget: int = 1500, session_id: str | None = None,
                user_id: str | None = None) -> str:
        """A prompt block for the task at hand, packed into `budget` tokens: identity, the most
        relevant memories, episodes and procedures, and the session's recent turns. With
        `user_id` (the person the agent is serving): never another user's records."""
        return memory.context(query, budget=budget, session_id=session_id, user_id=user_id, **ns.read(ctx)).text

    @server.tool()
    @tool_errors
    def add_messages(session_id: str, messages: list[Turn], ctx: Context, user_id: str | None = None) -> dict[str, Any]:
        """Append conversation turns to a session (made on its first turn); facts, episodes and
        procedures are extracted from them in the background. `user_id`: whose conversation it is."""
        turns = [MessageIn(role=m.role, content=m.content, speaker=m.speaker, user_id=user_id) for m in messages]
        added = memory.add_messages(session_id, turns, namespace=ns(ctx, write=True))
        return {"session_id": session_id, "message_ids": [m.id for m in added]}

    @server.tool()
    @tool_errors
    def forget(memory_id: str, ctx: Context) -> dict[str, int]:
        """Delete a memory (or any record by id) for good, with what was derived from it."""
        return {"deleted": memory.forget(memory_id, namespace=ns(ctx, write=True))}

    @server.tool()
    @tool_errors
    def update(memory_id: str, ctx: Context, text: str | None = None, subject: str | None = None,
               predicate: str | None = None, object: str | None = None, importance: float | None = None,  # noqa: A002
               pinned: bool | None = None, reason: str = "correction") -> dict[str, Any]:
        """Correct a memory: a new text or subject/predicate/object makes a new version that
        supersedes the old one (kept in its history with the reason; a new text alone re-derives
        the triple); importance and pinned change in place."""
        fields = {k: v for k, v in {"text": text, "subject": subject, "predicate": predicate, "object": object,
                                    "importance": importance, "pinned": pinned}.items() if v is not None}
        rec = memory.update(memory_id, reason=reason, namespace=ns(ctx, write=True), **fields)
        return rec.model_dump(mode="json", include={"id", "text", "subject", "predicate", "object", "status",
                                                    "importance", "pinned"})

    @server.tool()
    @tool_errors
    def history(memory_id: str, ctx: Context) -> dict[str, Any]:
        """A memory's versions: what it superseded and what superseded it, with the reasons."""
        return memory.history(memory_id, namespace=ns(ctx)).model_dump(mode="json", exclude_none=True)

    @server.tool()
    @tool_errors
    def search_entities(query: str, ctx: Context, type: str | None = None, k: int = 10) -> list[dict[str, Any]]:
        """People, places, organisations and things the memory knows, by name or alias."""
        return [e.model_dump(mode="json", include={"id", "name", "type", "description", "aliases"})
                for e in memory.find_entities(query, type=type, k=k, namespace=ns(ctx))]

    @server.tool()
    @tool_errors
    def get_procedure(ctx: Context, procedure_id: str | None = None, task: str | None = None) -> dict[str, Any]:
        """A learned workflow with its ordered steps: by id, or the best match for a task."""
        where = ns(ctx)
        if procedure_id:
            found = memory.get(procedure_id, namespace=where)
        elif task:
            hits = memory.recall(task, k=1, layers=["procedure"], namespace=where)
            if not hits:
                raise ValidationError(f"no procedure matches {task!r}")
            found = hits[0].item
        else:
            raise ValidationError("give procedure_id or task")
        if found.kind != "procedure":
            raise ValidationError(f"{found.id!r} is a {found.kind}, not a procedure")
        return found.model_dump(mode="json", include={"id", "task", "steps", "success_count", "failure_count",
                                                      "importance"})

    @server.tool()
    @tool_errors
    def record_outcome(ctx: Context, procedure_id: str, success: bool, failed_step: int | str | None = None
                       ) -> dict[str, Any]:
        """Report how following a procedure went: success, or failure at a step (its number or
        text). Procedures that keep failing at a step say so in explain and in their counts."""
        done = memory.record_outcome(procedure_id, success, failed_step=failed_step, namespace=ns(ctx, write=True))
        return done.model_dump(mode="json", include={"id", "task", "success_count", "failure_count"})

    @server.tool()
    @tool_errors
    def start_trace(task: str, ctx: Context, session_id: str | None = None) -> dict[str, Any]:
        """Begin recording your own run on a task; add its steps with add_trace_step and finish it
        with complete_trace. Runs that succeed the same way twice become a procedure."""
        trace = memory.start_trace(task, session_id=session_id, namespace=ns(ctx, write=True))
        return trace.model_dump(mode="json", include={"id", "task", "session_id"})

    @server.tool()
    @tool_errors
    def add_trace_step(trace_id: str, ctx: Context, thought: str | None = None, action: str | None = None,
                       observation: str | None = None, tool: str | None = None,
                       tool_arguments: dict[str, Any] | None = None, tool_result: str | None = None,
                       tool_status: ToolStatus = "success",
                       duration_ms: float | None = None) -> dict[str, Any]:
        """The run's next step (numbered for you): what you thought, did and saw, and the tool you
        called with its arguments, result, status and duration."""
        where = ns(ctx, write=True)
        step = memory.add_step(trace_id, thought=thought, action=action, observation=observation, namespace=where)
        if tool is not None:
            memory.add_tool_call(step.id, tool, tool_arguments, result=tool_result, status=tool_status,
                                 duration_ms=duration_ms, namespace=where)
        return step.model_dump(mode="json", include={"id", "trace_id", "order"})

    @server.tool()
    @tool_errors
    def complete_trace(trace_id: str, success: bool, ctx: Context, outcome: str = "") -> dict[str, Any]:
        """Finish a run: a success may reinforce or teach a procedure (procedure_id says which), a
        failure counts against the procedure and the step it failed at."""
        done = memory.complete_trace(trace_id, outcome=outcome, success=success, namespace=ns(ctx, write=True))
        return done.model_dump(mode="json", include={"id", "task", "success", "step_count", "procedure_id"})

    @server.tool()
    @tool_errors
    def similar_traces(task: str, ctx: Context, k: int = 5, success_only: bool = False) -> list[dict[str, Any]]:
        """Your past runs nearest to a task, with their outcome: how it went last time."""
        return [{"similarity": round(h.similarity, 4), **h.trace.model_dump(
            mode="json", include={"id", "task", "outcome", "success", "step_count", "procedure_id"})}
            for h in memory.similar_traces(task, k=k, success_only=success_only, namespace=ns(ctx))]

    @server.tool()
    @tool_errors
    def stats(ctx: Context) -> dict[str, Any]:
        """How many memories, episodes, procedures, turns and entities this namespace holds."""
        return memory.stats(namespace=ns(ctx))

    def own(namespace: str, ctx: Context) -> str:
        if namespace != ns(ctx):  # the URI names the namespace; it must be the caller's own
            raise ValidationError(f"namespace {namespace!r} is not this connection's")
        return namespace

    @server.resource("graphmem://{namespace}/soul", mime_type="text/plain",
                     description="the identity block heading every context of the namespace")
    @resource_errors
    def soul(namespace: str, ctx: Context) -> str:
        return memory.get_soul(namespace=own(namespace, ctx))

    @server.resource("graphmem://{namespace}/sessions/{session_id}/summary", mime_type="text/plain",
                     description="a session's running summary")
    @resource_errors
    def summary(namespace: str, session_id: str, ctx: Context) -> str:
        return memory.get_session(session_id, namespace=own(namespace, ctx)).summary

    return server
