"""Who may talk to a local server from a browser: the Host names it answers to and the web
origins it accepts, shared by ``graphmem serve`` and ``graphmem mcp -t http``.

A server on loopback is not private: any web page the user opens can send it requests, and by
DNS rebinding (a name of the attacker's that resolves to 127.0.0.1) can even read the answers.
Three checks close that, before any route runs:

- **Host.** A request must name a host the server answers to: the loopback names on a loopback
  server, the bound address on another, plus each ``--allowed-host``. A rebinding page's
  requests carry the attacker's name and get 421. A literal IP address is accepted on a server
  bound beyond loopback (no page can be served from another's address); on loopback only
  loopback addresses are.
- **Origin.** A request that a page sent (it carries ``Origin``, or ``Sec-Fetch-Site`` says it
  is cross-site) must come from the server's own origin or from a ``--cors-origin``; otherwise
  403. Top-level navigations (a link to ``/ui``) are let through: they cannot read the answer
  and write nothing.
- **Content type.** A write (POST, PUT, PATCH, DELETE) with a body must not use a content type
  a page can send without asking first (``text/plain``, form encodings): 415. That keeps old
  browsers, which send no ``Origin``, from planting data.

CORS is off unless ``--cors-origin`` names origins; then those get the CORS headers too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SIMPLE_TYPES = frozenset({"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"})


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def split_host(value: str) -> tuple[str, str]:
    """``Host`` header (or an origin's netloc) -> (host in lower case, port or ''):
    ``[::1]:8765`` -> ('::1', '8765'), ``Localhost.`` -> ('localhost', '')."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else ""
    host, _, port = value.partition(":") if value.count(":") == 1 else (value, "", "")
    return host.rstrip("."), port


class HostPolicy:
    """The hosts and origins one server accepts; see the module's text."""

    def __init__(self, bound: str, allowed_hosts: Iterable[str] = (), cors_origins: Iterable[str] = ()) -> None:
        bound = bound.strip("[]").lower()
        address = _ip(bound)
        self.loopback = bound == "localhost" or (address is not None and address.is_loopback)
        names = set(LOOPBACK_NAMES)
        if bound not in WILDCARD:
            names.add(bound)
        names.update(split_host(h)[0] for h in allowed_hosts if h.strip())
        self.any_host = "*" in names
        self.names = frozenset(names - {"*"})
        self.origins = frozenset(o.strip().rstrip("/").lower() for o in cors_origins if o.strip())

    def host_ok(self, host: str) -> bool:
        if self.any_host or host in self.names:
            return True
        address = _ip(host)
        return address is not None and (address.is_loopback or not self.loopback)

    def origin_ok(self, origin: str, host_header: str) -> bool:
        """The request's own origin (scheme http(s), same host and port as it was sent to), or
        a configured CORS origin. ``null`` (a sandboxed page, a file) is never one."""
        origin = origin.strip().rstrip("/").lower()
        if origin in self.origins or "*" in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and split_host(parts.netloc) == split_host(host_header)

    @property
    def hosts_text(self) -> str:
        names = sorted(self.names) + (["*"] if self.any_host else [])
        return ", ".join(names) + ("" if self.loopback else " and this machine's IP addresses")


class BrowserGuard:
    """ASGI middleware enforcing a ``HostPolicy``; refusals are problem+json (``respond``
    builds them, so each face keeps its own error format)."""

    def __init__(self, app: Any, policy: HostPolicy, respond: Callable[[Request, int, str, str], Any]) -> None:
        self.app, self.policy, self.respond = app, policy, respond

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, title, detail = refusal
        await self.respond(Request(scope), status, title, detail)(scope, receive, send)

    def refusal(self, scope: dict) -> tuple[int, str, str] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host_header = headers.get("host", "")
        host, _ = split_host(host_header)
        if not self.policy.host_ok(host):
            return (421, "Misdirected request",
                    f"this server answers to the host names {self.policy.hosts_text}, not {host_header!r} "
                    "(a page that renamed this server, or a name it was not told: graphmem serve --allowed-host NAME)")
        method = scope.get("method", "GET").upper()
        origin = headers.get("origin")
        site = headers.get("sec-fetch-site", "")
        if origin is not None and not self.policy.origin_ok(origin, host_header):
            if not (method in ("GET", "HEAD") and headers.get("sec-fetch-mode") == "navigate"):
                return (403, "Forbidden", f"requests from the web origin {origin!r} are refused (CORS is off; allow "
                                          "an origin with graphmem serve --cors-origin ORIGIN)")
        elif origin is None and site in ("cross-site", "same-site") and headers.get("sec-fetch-mode") != "navigate":
            return 403, "Forbidden", "requests that another site's page sent are refused (Sec-Fetch-Site: " + site + ")"
        if method in WRITES:
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind in SIMPLE_TYPES:
                return (415, "Unsupported media type", f"writes take application/json (or application/x-ndjson for "
                                                       f"import), not {kind}: a web page can send {kind} to any server")
        return None


def cors_options(policy: HostPolicy) -> dict[str, Any]:
    """Starlette ``CORSMiddleware``'s options for the configured origins (no cookies: keys
    travel in headers)."""
    return {"allow_origins": sorted(policy.origins), "allow_credentials": False, "allow_methods": ["*"],
            "allow_headers": ["Authorization", "X-API-Key", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version"]}


def guarded(app: Any, policy: HostPolicy, respond: Callable[[Request, int, str, str], Any]) -> Any:
    """``app`` behind the guard, with CORS answered for the configured origins (if any)."""
    if policy.origins:
        from starlette.middleware.cors import CORSMiddleware

        app = CORSMiddleware(app, **cors_options(policy))
    return BrowserGuard(app, policy, respond)
