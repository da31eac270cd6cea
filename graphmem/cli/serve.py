"""``graphmem serve`` (the REST API) and ``graphmem keys`` (its API keys)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Optional

import typer

from ..errors import ConfigurationError
from . import _print_json, app, err, handles_errors, id_table, out, settings, state, unless_set

keys_app = typer.Typer(help="API keys of graphmem serve: create, list, revoke. Each key is for one namespace.",
                       no_args_is_help=True)
app.add_typer(keys_app, name="keys")


def key_store():
    from ..serve.keys import KeyStore

    s = settings()
    db = state.db or s.path
    return KeyStore(s.keys_path or db.with_name(f"{db.stem}.keys.db"))


def serving_keys(conf):
    """The key store of a server, with ``GRAPHMEM_FIRST_KEY`` stored as its first key when it has
    none (a container's first start needs no second command)."""
    keys = key_store()
    if conf.first_key is not None:
        made = keys.adopt_first(conf.first_key_namespace, conf.first_key.get_secret_value(), label="GRAPHMEM_FIRST_KEY")
        if made is not None:
            err.print(f"stored GRAPHMEM_FIRST_KEY as the first API key (id {made.id}, namespace {made.namespace!r})",
                      highlight=False)
    return keys


def _uvicorn():
    """uvicorn, and the serve extra behind it, or a clear error naming the extra."""
    import importlib

    try:
        for name in ("fastapi", "mcp", "uvicorn"):
            module = importlib.import_module(name)
    except ImportError as exc:
        raise ConfigurationError(f"this command needs the serve extra ({exc.name} is missing): "
                                 "pip install 'graphmem[serve]'") from None
    return module


def host_policy(host: str, keys, allowed_hosts: list[str], cors_origins: list[str], conf):
    """What a server accepts from browsers (``serve/hosts.py``); an open server (no API keys)
    listens on loopback only."""
    from ..serve.hosts import HostPolicy

    policy = HostPolicy(host, [*conf.serve_allowed_hosts, *allowed_hosts], [*conf.serve_cors_origins, *cors_origins])
    if not policy.loopback and not keys.any():
        raise ConfigurationError(f"refusing to listen on {host} without API keys: set GRAPHMEM_FIRST_KEY (32+ characters) "
                                 "or run `graphmem keys create --namespace NS` (an open server is for loopback only)")
    return policy


ALLOWED_HOST = typer.Option([], "--allowed-host", help="a Host name clients use to reach this server, besides the "
                            "loopback names and the bound address (repeatable; '*' for any, keyed servers behind a "
                            "proxy); requests naming another get 421, which stops DNS rebinding")
CORS_ORIGIN = typer.Option([], "--cors-origin", help="a web origin (https://app.example) whose pages may call this "
                           "server (repeatable); CORS is off without one, and pages of other origins get 403")


def serving_settings():
    """A server's settings: one BLAS thread unless GRAPHMEM_BLAS_THREADS says otherwise (recall's
    latency is the same, its CPU half, and the cores stay with a co-located Neo4j), and the heap
    frozen after the first recall unless GRAPHMEM_GC_FREEZE says otherwise (the process is ours)."""
    return settings(**unless_set(blas_threads=1, gc_freeze=True))


# An idle keep-alive connection is closed by the client first (Node's fetch after 4 s, httpx after 5):
# with uvicorn's 5 s a client whose event loop was busy for 5 s sent its next request down a socket
# the server had just closed ("fetch failed", other side closed).
KEEP_ALIVE_S = 75


WORKER_SPEC = "GRAPHMEM_SERVE_WORKER"  # what serve --workers hands its worker processes (JSON)


def _rest_app(host: str, allowed_host: list[str], cors_origin: list[str], keys=None):
    """The REST app for these options, with its key store and host policy."""
    from ..engine import Memory
    from ..serve.app import create_app

    conf = serving_settings()
    keys = serving_keys(conf) if keys is None else keys
    hosts = host_policy(host, keys, allowed_host, cors_origin, conf)
    return create_app(lambda: Memory(state.db, settings=conf), keys, max_body=conf.serve_max_body, hosts=hosts), \
        conf, keys, hosts


def worker_app():
    """The app of one process of ``graphmem serve --workers N`` (uvicorn's factory: each worker
    imports this and builds its own app, from the options the parent put in the environment)."""
    spec = json.loads(os.environ[WORKER_SPEC])
    state.db = Path(spec["db"]) if spec["db"] else None
    return _rest_app(spec["host"], spec["allowed_host"], spec["cors_origin"], keys=key_store())[0]


@app.command()
@handles_errors
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on; other than loopback needs API keys"),
    port: int = typer.Option(8765, "--port", min=1, max=65535),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn's: critical, error, warning, info, debug"),
    allowed_host: list[str] = ALLOWED_HOST,
    cors_origin: list[str] = CORS_ORIGIN,
    workers: int = typer.Option(1, "--workers", min=1, max=64, help="server processes sharing the port and the store "
                                "(each runs its own background work; extraction windows are claimed with leases in "
                                "the store, so each is extracted once)"),
) -> None:
    """Serve the REST API (OpenAPI at /openapi.json, docs at /docs). With no API keys it runs
    open, on loopback only; with keys every request needs one and acts in its namespace."""
    uvicorn = _uvicorn()
    server, conf, keys, hosts = _rest_app(host, allowed_host, cors_origin)
    mode = "API keys required" if keys.any() else "open (no API keys; loopback only)"
    out.print(f"graphmem serve: http://{host}:{port} ({mode}; store {conf.backend}; keys {keys.path}; answers to "
              f"{hosts.hosts_text}; CORS {', '.join(sorted(hosts.origins)) or 'off'}; "
              f"{workers} worker{'s' if workers > 1 else ''})", highlight=False)
    if workers == 1:
        uvicorn.run(server, host=host, port=port, log_level=log_level, timeout_keep_alive=KEEP_ALIVE_S)
        return
    os.environ[WORKER_SPEC] = json.dumps({"db": str(state.db) if state.db else None, "host": host,
                                          "allowed_host": allowed_host, "cors_origin": cors_origin})
    uvicorn.run("graphmem.cli.serve:worker_app", factory=True, workers=workers, host=host, port=port,
                log_level=log_level, timeout_keep_alive=KEEP_ALIVE_S)


@app.command()
@handles_errors
def mcp(
    transport: str = typer.Option("stdio", "--transport", "-t", help="stdio (an MCP client starts graphmem) or http "
                                  "(streamable HTTP at /mcp)"),
    host: str = typer.Option("127.0.0.1", "--host", help="http: address to listen on; other than loopback needs keys"),
    port: int = typer.Option(8766, "--port", min=1, max=65535),
    allowed_host: list[str] = ALLOWED_HOST,
    cors_origin: list[str] = CORS_ORIGIN,
) -> None:
    """Serve graphmem to MCP clients (tools remember, recall, context, add_messages, forget, update,
    history, search_entities, get_procedure, stats; the soul and session summaries as resources).
    The namespace is the global --namespace, or over HTTP the API key's."""
    if transport not in ("stdio", "http"):
        raise ConfigurationError(f"--transport must be stdio or http, not {transport!r}")
    uvicorn = _uvicorn()
    from ..engine import Memory
    from ..serve.mcp import build

    conf = serving_settings()
    keys = serving_keys(conf)
    hosts = host_policy(host, keys, allowed_host, cors_origin, conf) if transport == "http" else None
    with Memory(state.db, settings=conf) as memory:
        where = f"[{host}]" if ":" in host else host  # an IPv6 address in a URL
        server = build(memory, state.namespace, keys, url=f"http://{where}:{port}" if transport == "http" else None)
        if transport == "stdio":
            server.run("stdio")  # stdout is the protocol's: nothing else may print there
            return
        from mcp.server.transport_security import TransportSecuritySettings

        from ..serve.app import problem
        from ..serve.hosts import guarded

        # the REST server's Host, Origin and content-type checks (the SDK's own would let a page of any
        # localhost port in, and none on a server bound beyond loopback)
        web = guarded(server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)), hosts, problem)
        mode = "API keys required" if keys.any() else f"open, namespace {state.namespace!r}"
        err.print(f"graphmem mcp: http://{host}:{port}/mcp ({mode}; answers to {hosts.hosts_text})", highlight=False)
        # uvicorn shuts down on SIGTERM and then raises it again with the handler it found: an exit
        # through ``with`` (the store closed, its WAL folded in), not the default handler's kill
        signal.signal(signal.SIGTERM, _exit_on_signal)
        uvicorn.run(web, host=host, port=port, log_level="warning", timeout_keep_alive=KEEP_ALIVE_S)


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@keys_app.command("create")
@handles_errors
def create(
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="the namespace the key reaches "
                                            "(default: the global --namespace)"),
    read_only: bool = typer.Option(False, "--read-only", help="reads only: recall, context, lists, export"),
    label: str = typer.Option("", "--label", help="what the key is for"),
    admin: bool = typer.Option(False, "--admin", help="a key that manages tenants' keys over REST (/v1/keys) and "
                               "reaches no namespace"),
) -> None:
    """Create a key; its token is printed once and never stored (only its hash is)."""
    key, token = key_store().create(namespace or state.namespace, read_only=read_only, label=label, admin=admin)
    what = "an admin key (it manages keys over REST)" if admin else f"for namespace {key.namespace!r}"
    out.print(f"created key {key.id} {what}{' (read-only)' if read_only else ''}", highlight=False)
    print(token)


@keys_app.command("list")
@handles_errors
def list_(
    everything: bool = typer.Option(False, "--all", help="revoked keys too"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Keys (never their tokens)."""
    found = key_store().list(revoked=everything)
    if as_json:
        _print_json([k.model_dump(mode="json") for k in found])
        return
    if not found:
        out.print("no API keys")
        return
    table = id_table("id", "namespace", "access", "created", "revoked", "label", ids=[k.id for k in found])
    for k in found:
        access = "admin (keys)" if k.admin else "read-only" if k.read_only else "read-write"
        table.add_row(k.id, k.namespace, access, f"{k.created_at:%Y-%m-%d %H:%M}",
                      f"{k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "", k.label)
    out.print(table)


@keys_app.command("revoke")
@handles_errors
def revoke(key_id: str = typer.Argument(..., help="the key's id (from keys list)")) -> None:
    """Revoke a key: requests with it get 401 from now on."""
    key = key_store().revoke(key_id)
    out.print(f"revoked key {key.id} (namespace {key.namespace!r})", highlight=False)

