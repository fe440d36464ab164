"""A fake OpenAI Responses API on the loopback interface, for the Codex CLI's tests.

The Codex CLI speaks the Responses API (`POST /v1/responses`, streamed as server-sent
events) to whatever `base_url` its model provider names, so the `codex` backend's tests
point a provider at this server and run the real CLI against it. Nothing below the socket
is mocked.

What it speaks: `POST .../responses` with `"stream": true` as SSE (`response.created`,
`response.output_item.added`, `response.output_text.delta`, `response.output_item.done`,
`response.completed` with usage), without it as one JSON response; `GET .../models` as an
empty list; anything else is a 404. A test scripts a callable that looks at each recorded
request and returns the output items (built with `message` and `function_call`). Input
tokens are the request's size / 4, output tokens the answer's size / 4.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support import sse

_ids = itertools.count(1)


def message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{next(_ids)}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    n = next(_ids)
    return {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def tool_names(self) -> list[str]:
        return [t.get("name") or t.get("type", "") for t in self.body.get("tools", [])]

    def outputs(self) -> list[dict[str, Any]]:
        """The function-call outputs the client sent back in this request's input."""
        return [
            i for i in self.body.get("input", []) if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]


Script = Callable[[Recorded], list[dict[str, Any]]]


@dataclass
class FakeResponses:
    script: Script = lambda r: [message("hello")]  # noqa: E731
    requests: list[Recorded] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    refuse: int | None = None

    def __enter__(self) -> FakeResponses:
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def responses(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/responses")]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up (a call killed at its timeout) is what the test meant to do


def _usage(body: dict[str, Any], output: list[dict[str, Any]]) -> dict[str, Any]:
    sent, written = len(json.dumps(body)) // 4, max(1, len(json.dumps(output)) // 4)
    return {
        "input_tokens": sent,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": written,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": sent + written,
    }


def _handler_for(fake: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802
            fake.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, {}))
            if self.path.split("?")[0].endswith("/models"):
                self._json(200, {"object": "list", "data": [], "models": []})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("content-encoding") == "zstd":
                fake.failures.append("a zstd-compressed request body (set features.enable_request_compression=false)")
                self._json(400, {"error": {"message": "compressed body", "type": "invalid_request_error"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                fake.failures.append(f"a request body that is not JSON on {self.path}")
                self._json(400, {"error": {"message": "not JSON", "type": "invalid_request_error"}})
                return
            recorded = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            fake.requests.append(recorded)
            if not self.path.split("?")[0].endswith("/responses"):
                fake.failures.append(f"a request the fake does not serve: POST {self.path}")
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            if fake.refuse is not None:  # every request refused with this status, in the API's error shape
                self._json(
                    fake.refuse,
                    {
                        "error": {
                            "message": "Incorrect API key provided",
                            "type": "invalid_request_error",
                            "code": "invalid_api_key",
                        }
                    },
                )
                return
            try:
                output = fake.script(recorded)
            except Exception as exc:  # noqa: BLE001 - a broken script is a test failure, said in the response too
                fake.failures.append(f"script failed: {exc!r}")
                self._json(500, {"error": {"message": repr(exc), "type": "server_error"}})
                return
            response = {
                "id": f"resp_{next(_ids)}",
                "object": "response",
                "status": "completed",
                "model": body.get("model"),
                "output": output,
                "usage": _usage(body, output),
            }
            if not body.get("stream"):
                self._json(200, response)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            created = {**response, "status": "in_progress", "output": [], "usage": None}
            self._event("response.created", {"response": created})
            for index, item in enumerate(output):
                self._event("response.output_item.added", {"output_index": index, "item": item})
                if item["type"] == "message":
                    text = item["content"][0]["text"]
                    self._event(
                        "response.output_text.delta",
                        {"output_index": index, "item_id": item["id"], "content_index": 0, "delta": text},
                    )
                self._event("response.output_item.done", {"output_index": index, "item": item})
            self._event("response.completed", {"response": response})
            self.close_connection = True

        def _event(self, kind: str, data: dict[str, Any]) -> None:
            # Not chunked: this stream ends when the connection closes, as the Responses API's may.
            self.wfile.write(sse.encode({"type": kind, **data}, kind))
            self.wfile.flush()

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


if __name__ == "__main__":
    with FakeResponses() as fake:
        print(fake.base_url, flush=True)
        threading.Event().wait()
