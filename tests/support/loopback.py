"""The HTTP plumbing the fake API servers (`fakeapi`, `fakeopenai`) share: a server that takes a
client hanging up in its stride, a JSON answer, and a connection dropped without one."""

from __future__ import annotations

import json
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietServer(ThreadingHTTPServer):
    """A server that takes a client hanging up (as retried or cancelled calls do) in its stride."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def send_json(
    handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    """One JSON answer with its length, so the connection serves the next request."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)


def drop(handler: BaseHTTPRequestHandler) -> None:
    """Close the connection with no answer (or mid-stream), as a network failure would."""
    handler.close_connection = True
    try:
        handler.wfile.flush()
        handler.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
