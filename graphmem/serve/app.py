"""The REST face: a FastAPI app over one ``Memory``. Routes only translate HTTP to ``Memory``
calls (``routes.py``); here are the parts every route shares: who is asking (an API key and
its namespace), errors as problem+json, the request size limit and cursor pagination."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from fastapi import Depends, FastAPI, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (ConfigurationError, ConflictError, EmbeddingError, ExtractionError, GraphMemError, NotFoundError,
                      StoreError, ValidationError)
from ..models.fields import NAMESPACE_PATTERN
from .hosts import BrowserGuard, HostPolicy, cors_options
from .keys import ApiKey, KeyStore

log = logging.getLogger("graphmem.serve")
T = TypeVar("T")
PROBLEM = "application/problem+json"


class Problem(Exception):
    """An HTTP error with its problem+json fields (RFC 9457)."""

    def __init__(self, status: int, title: str, detail: str = "", headers: dict[str, str] | None = None) -> None:
        super().__init__(detail or title)
        self.status, self.title, self.detail, self.headers = status, title, detail, headers or {}


class Tenant(BaseModel):
    """Who a request acts for: the namespace (from the key, or the ``namespace`` parameter on
    an open loopback server), whether it may write, and the key's id."""

    namespace: str
    read_only: bool = False
    key_id: str | None = None


class ProblemDetails(BaseModel):
    """An error (RFC 9457 problem details): ``detail`` says what was wrong."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    errors: list[dict[str, Any]] | None = Field(default=None, description="422/400: every field that failed")
    line: int | None = Field(default=None, description="import: the line that could not be read")


def _problem_response(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {PROBLEM: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}}


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _problem_response("malformed JSON, a cursor of another listing"),
    401: _problem_response("a key is required, or the key is unknown or revoked"),
    403: _problem_response("the key is for another namespace, or read-only; or a web page of another origin sent it"),
    404: _problem_response("no such record in this namespace"),
    405: _problem_response("method not allowed"),
    409: _problem_response("a conflict: the id is taken"),
    413: _problem_response("the body is over the size limit"),
    421: _problem_response("the Host header names a host this server does not answer to (DNS rebinding)"),
    422: _problem_response("invalid input: the field and why"),
    503: _problem_response("the store, the embedder or the model is unavailable"),
}


class Page(BaseModel, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


# errors ------------------------------------------------------------------------------------
_STATUS: list[tuple[type[GraphMemError], int, str]] = [  # the most specific first
    (ConflictError, 409, "Conflict"),
    (NotFoundError, 404, "Not Found"),
    (ValidationError, 422, "Invalid input"),
    (ExtractionError, 503, "Extraction unavailable"),
    (ConfigurationError, 503, "Misconfigured"),
    (StoreError, 503, "Store unavailable"),
    (EmbeddingError, 503, "Embedding unavailable"),
]


def problem(request: Request, status: int, title: str, detail: str = "", headers: dict[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    body = {"type": f"https://graphmem.dev/problems/{title.lower().replace(' ', '-')}", "title": title,
            "status": status, "detail": detail, "instance": request.url.path, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return problem(request, exc.status, exc.title, exc.detail, exc.headers)

    @app.exception_handler(GraphMemError)
    async def _graphmem(request: Request, exc: GraphMemError) -> JSONResponse:
        status, title = next(((s, t) for cls, s, t in _STATUS if isinstance(exc, cls)), (500, "Internal error"))
        extra = {"line": exc.line} if hasattr(exc, "line") else {}
        return problem(request, status, title, str(exc), **extra)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
                  for e in exc.errors()[:20]]
        if any(e["type"] == "json_invalid" for e in errors):
            return problem(request, 400, "Bad request", "the body is not valid JSON", errors=errors)
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"])
        return problem(request, 422, "Invalid input", f"{where}: {first['msg']}", errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return problem(request, exc.status_code, _TITLES.get(exc.status_code, "Error"), str(exc.detail or ""),
                       headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return problem(request, 500, "Internal error", "an unexpected error; the server log has the details")


_TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method not allowed",
           413: "Request too large", 415: "Unsupported media type", 421: "Misdirected request"}


# the request size limit ------------------------------------------------------------------
class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is refused with 413, whether it announces
    its length or streams in chunks, before a route reads it all."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await self._refuse(scope, receive, send)
            return
        seen = 0
        started = False

        async def counted() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge(self.limit)
            return message

        async def sending(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except _TooLarge:
            if not started:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: dict, receive: Callable, send: Callable) -> None:
        response = problem(Request(scope), 413, "Request too large", f"the body is over {self.limit} bytes")
        await response(scope, receive, send)


class _TooLarge(StarletteHTTPException):
    """An HTTP error, so a route that parses JSON passes it on as a 413 (FastAPI turns any
    other error raised while reading a body into a 400)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the body is over {limit} bytes")


# who is asking -----------------------------------------------------------------------------
# declared in the OpenAPI schema (the Authorize button of /docs); either one carries the key
_BEARER = HTTPBearer(auto_error=False, scheme_name="bearer", description="an API key (`graphmem keys create`)")
_HEADER = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="apiKey", description="the same key")


def _token(bearer: HTTPAuthorizationCredentials | None, header: str | None) -> str | None:
    """The key a request carries: ``Authorization: Bearer <key>``, else ``X-API-Key``."""
    return (bearer.credentials.strip() if bearer else None) or header or None


def tenant(request: Request, namespace: str | None = Query(
        None, pattern=NAMESPACE_PATTERN, description="the namespace to act in: only on an open loopback server; with a key it must be the "
                          "key's own or left out"),
        bearer: HTTPAuthorizationCredentials | None = Security(_BEARER),
        header: str | None = Security(_HEADER)) -> Tenant:
    """The tenant of a request. With keys configured, a request needs one (``Authorization:
    Bearer <key>`` or ``X-API-Key``) and acts in its namespace; naming another is 403 whatever
    the id or body says. With no keys (loopback only), the ``namespace`` parameter chooses."""
    keys: KeyStore = request.app.state.keys
    token = _token(bearer, header)
    if not keys.any():
        if token:
            raise Problem(401, "Unauthorized", "no API keys are configured on this server",
                          {"WWW-Authenticate": "Bearer"})
        return Tenant(namespace=namespace or "default")
    key = keys.verify(token) if token else None
    if key is None:
        raise Problem(401, "Unauthorized", "a valid API key is required (Authorization: Bearer <key>)"
                      if token is None else "unknown or revoked API key", {"WWW-Authenticate": "Bearer"})
    if key.admin:
        raise Problem(403, "Forbidden", "an admin key manages keys (/v1/keys) and reaches no namespace")
    if namespace is not None and namespace != key.namespace:
        raise Problem(403, "Forbidden", f"this key is for namespace {key.namespace!r}, not {namespace!r}")
    return Tenant(namespace=key.namespace, read_only=key.read_only, key_id=key.id)


def admin(request: Request, bearer: HTTPAuthorizationCredentials | None = Security(_BEARER),
          header: str | None = Security(_HEADER)) -> ApiKey:
    """An admin key (``graphmem keys create --admin``): 401 without a valid key, 403 with a
    tenant's key, and 403 on a server without keys (make the first admin key with the CLI)."""
    keys: KeyStore = request.app.state.keys
    token = _token(bearer, header)
    if not keys.any():
        raise Problem(403, "Forbidden", "this server has no keys: create an admin key with "
                      "`graphmem keys create --admin` to manage keys over REST")
    key = keys.verify(token) if token else None
    if key is None:
        raise Problem(401, "Unauthorized", "a valid admin key is required", {"WWW-Authenticate": "Bearer"})
    if not key.admin:
        raise Problem(403, "Forbidden", "this key is a tenant's; managing keys needs an admin key")
    return key


def writer(who: Tenant = Depends(tenant)) -> Tenant:
    if who.read_only:
        raise Problem(403, "Forbidden", "this API key is read-only")
    return who


# pagination --------------------------------------------------------------------------------
MAX_CURSOR_CHARS = 200
def paged(fetch: Callable[[int, int], list[T]], limit: int, cursor: str | None, filters: dict[str, Any]) -> Page[T]:
    """One page of a listing by an opaque cursor: the offset it stopped at, bound to the
    filters it was made with (a cursor used with other filters is a 400, not a wrong page)."""
    stamp = hashlib.sha256(json.dumps(filters, sort_keys=True, default=str).encode()).hexdigest()[:12]
    offset = 0
    if cursor:
        ok = False
        if len(cursor) <= MAX_CURSOR_CHARS:  # what this listing gives is ~60; a nested or huge one never parses
            try:
                data = json.loads(base64.urlsafe_b64decode(cursor.encode() + b"=" * (-len(cursor) % 4)))
                ok = (isinstance(data, dict) and type(data.get("o")) is int and data["o"] >= 0
                      and data.get("f") == stamp)  # Infinity, NaN or 1e999 is a float: refused
                offset = data["o"] if ok else 0
            except (ValueError, UnicodeError):
                ok = False
        if not ok:
            raise Problem(400, "Bad request", "the cursor is not one this listing gave with these filters")
    items = fetch(limit + 1, offset)
    more = len(items) > limit
    nxt = base64.urlsafe_b64encode(json.dumps({"o": offset + limit, "f": stamp}).encode()).decode().rstrip("=")
    return Page[Any](items=items[:limit], next_cursor=nxt if more else None)


# the app -----------------------------------------------------------------------------------
def create_app(memory_factory: Callable[[], Any], keys: KeyStore, *, max_body: int = 16 * 2**20,
               hosts: HostPolicy | None = None) -> FastAPI:
    """The app; ``memory_factory`` opens the ``Memory`` it serves when the app starts (and it
    is closed when the app stops). ``hosts`` says which Host names and web origins it accepts
    (``hosts.py``); by default those of a loopback server with CORS off."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.memory = memory_factory()
        try:
            yield
        finally:
            app.state.memory.close()

    from importlib.metadata import version

    from .admin import router as admin_router
    from .procedural import router as procedural_router
    from .routes import router

    app = FastAPIOffline(title="graphmem", version=version("graphmem"), lifespan=lifespan,
                  description="Knowledge-graph memory for AI agents: sessions and turns in, memories, episodes and "
                              "procedures out; recall with a five-factor score and the path that found each item.")
    app.state.keys = keys
    _install_errors(app)
    app.include_router(router)
    app.include_router(procedural_router)
    app.include_router(admin_router)
    schema_of = app.openapi

    def openapi() -> dict[str, Any]:  # the problem schema once, referenced by every route's errors
        schema = schema_of()
        schema["components"]["schemas"].setdefault("ProblemDetails", ProblemDetails.model_json_schema())
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_middleware(BodyLimit, limit=max_body)
    hosts = hosts or HostPolicy("127.0.0.1")
    if hosts.origins:
        app.add_middleware(CORSMiddleware, **cors_options(hosts))
    app.add_middleware(BrowserGuard, policy=hosts, respond=problem)  # outermost: refused before anything runs
    return app
