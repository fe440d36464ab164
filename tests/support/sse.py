"""Server-sent events as the fake API servers write them (`fakeapi`, `fakeopenai`, `fakeresponses`).

One event is an optional `event:` line, a `data:` line (JSON, or text as it is, such as
OpenAI's `[DONE]`) and a blank line. A stream of the chunked kind sends each event in its own
HTTP chunk, flushed, so the client reads it before the next is written: a test that cuts a
stream after some events (`Cut`) relies on the client having seen exactly those.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def encode(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    """One event's bytes: its name when it has one, its data, and the blank line that ends it."""
    text = data if isinstance(data, str) else json.dumps(data)
    named = f"event: {event}\n" if event is not None else ""
    return f"{named}data: {text}\n\n".encode()


def start(handler: BaseHTTPRequestHandler, headers: dict[str, str] | None = None) -> None:
    """Answer 200 with an event stream in HTTP chunks, the connection kept for the next request."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()


def send(handler: BaseHTTPRequestHandler, data: dict[str, Any] | str, event: str | None = None) -> None:
    """One event in its own chunk, flushed."""
    payload = encode(data, event)
    handler.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
    handler.wfile.flush()


def end(handler: BaseHTTPRequestHandler) -> None:
    """The empty chunk that ends the stream."""
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()
