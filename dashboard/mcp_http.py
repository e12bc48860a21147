"""The MCP server over streamable HTTP, beside the site: each request acts as the user of its personal token.

`python manage.py mcp --http [--host H] [--port P]` serves it at `/mcp`. Before the SDK reads a request, the
API's own bearer check (`dashboard.bearer.bearer_authenticate`) runs on it, on a worker thread as the tools
do: the request then acts as the token's user (their role, what they see, their rate limit, their line in the
ledger), as an API call with the token does. No token, or one that is unknown or revoked, is refused with 401
and a JSON-RPC error whose message says what to do, which the SDK's client shows as the call's error. Each
request is checked on its own (the server keeps no sessions), so a revoked token is refused from its next call.

The token is read from the header and never written anywhere: the access log has the method, path and status.
"""

from __future__ import annotations

import io
import json
import logging
from contextvars import ContextVar

import anyio.to_thread
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections
from django.http import HttpRequest
from starlette.types import ASGIApp, Receive, Scope, Send

from dashboard.bearer import TOKEN_MALFORMED, BearerRefused, bearer_authenticate
from dashboard.mcp_server import mcp_server
from verifier.models import ApiToken

logger = logging.getLogger(__name__)

PATH = "/mcp"
TOKEN_MISSING = (
    "The MCP server over HTTP acts as the user of a personal API token: send `Authorization: Bearer gw_…` "
    "with a token from your account page (/accounts/tokens/)."
)
NOT_SERVING = "The MCP server over HTTP is not serving this request."
# A JSON-RPC error code in the range the specification leaves to servers: the call was not authorised.
UNAUTHORISED = -32001

_current: ContextVar[HttpRequest] = ContextVar("mcp_http_request")


def current_request() -> HttpRequest:
    """The HTTP request the running tool call came in (its user is the token's user), as `TokenGate` let it in."""
    try:
        return _current.get()
    except LookupError:  # a call that did not come through the gate: it acts for nobody
        raise RuntimeError(NOT_SERVING) from None


def _authenticated(request: HttpRequest) -> ApiToken | None:
    close_old_connections()
    try:
        return bearer_authenticate(request)
    finally:
        close_old_connections()


class TokenGate:
    """In front of the SDK's app: a request with an active personal token goes on, acting as its user; any
    other is answered 401 here, before the SDK reads its body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts and stops with it
            await self.app(scope, receive, send)
            return
        request = ASGIRequest(scope, io.BytesIO())  # Django's own reading of the headers and client address
        try:
            token = await anyio.to_thread.run_sync(_authenticated, request)
        except BearerRefused as refused:
            await _refuse(refused.message, scope, send)
            return
        if token is None:
            await _refuse(TOKEN_MISSING, scope, send)
            return
        entered = _current.set(request)
        try:
            await self.app(scope, receive, send)
        finally:
            _current.reset(entered)


async def _refuse(message: str, scope: Scope, send: Send) -> None:
    """401 with the reason as a JSON-RPC error (its id unknown: the body is not read)."""
    reason = (
        "malformed" if message == TOKEN_MALFORMED else "missing" if message == TOKEN_MISSING else "refused"
    )
    client = scope.get("client") or ("unknown", 0)
    logger.info("MCP request from %s refused: token %s", client[0], reason)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": UNAUTHORISED, "message": message}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="mcp"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def mcp_http_app(host: str) -> ASGIApp:
    """The server's ASGI app: the SDK's streamable HTTP app at `PATH` (stateless, JSON responses: any of several
    processes may serve any request), behind the token gate. `host` is the address it listens on: on a
    loopback address the SDK also refuses other Host and Origin headers (DNS rebinding)."""
    server = mcp_server(current_request)
    app = server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True, host=host
    )
    return TokenGate(app)
