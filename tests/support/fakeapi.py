"""A fake Anthropic Messages API on the loopback interface, for tests that must not touch the network.

The real backends (`anthropic` through the `anthropic` SDK, `claude-code` through the
Claude Code CLI) are pointed at this server with `base_url` / `ANTHROPIC_BASE_URL`, so
every test exercises the real client code: HTTP, JSON, server-sent events, error
statuses and retry headers. Nothing here is mocked below the socket.

What it speaks:

- `POST /v1/messages` as one JSON answer, or as SSE when the body has `"stream": true`
  (`message_start`, `content_block_start`, text / input_json / thinking / signature
  deltas, `content_block_stop`, `message_delta`, `message_stop`);
- `POST /v1/messages/count_tokens` (the Claude Code CLI asks for it);
- the Message Batches endpoints (`fakebatches.py`): create, retrieve, results;
- anything else: a 404 in the API's error shape.

What a test scripts: a list of replies taken in order, or a callable that looks at each
recorded request and decides (the only way to script concurrent works). A reply is a
`Reply` (content blocks built with `text`, `tool_use`, `thinking`), an `Error` (any
status, optional `retry-after`, optional mid-stream delivery), or a `Drop` (the
connection closes without an answer). Every request is recorded with its headers and
JSON body so tests can assert what reached the API (model, tools, cache_control).

Token usage is computed, not invented per test: input tokens are the request's size / 4,
output tokens the answer's size / 4, and prompt caching follows the API's rules
(`fakecache.py`: a prefix ending at a `cache_control` breakpoint is written the first time
it is seen and read when a later request starts with it, within the lookback window,
above the model's minimum length, inside its 5-minute or 1-hour life), which is how tests
and `bench/bench_cache.py` prove which marks pay.

Run on its own for manual poking: `python -m tests.fakeapi` prints its URL and answers
"hello" to everything until Ctrl-C.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support import loopback, sse
from tests.support.fakebatches import FakeBatches
from tests.support.fakecache import PromptCache

__all__ = [
    "Cut",
    "Drop",
    "Error",
    "FakeAnthropic",
    "Recorded",
    "Reply",
    "text",
    "thinking",
    "tool_use",
]

_ids = itertools.count(1)


# -- what a script answers with --------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> dict[str, Any]:  # noqa: A002
    """A tool_use content block; ids are unique per server process unless given."""
    return {"type": "tool_use", "id": id or f"toolu_fake{next(_ids):04d}", "name": name, "input": input}


def thinking(value: str, signature: str | None = None) -> dict[str, Any]:
    """A thinking block with an opaque signature, as newer models return between tool calls.

    The real API rejects a conversation whose thinking blocks come back altered, so the
    server remembers every signature it issued and `FakeAnthropic.altered_thinking` lists
    any that came back changed.
    """
    return {"type": "thinking", "thinking": value, "signature": signature or f"sig-{next(_ids):04d}"}


@dataclass
class Reply:
    """A successful answer. `stop_reason` defaults to tool_use when a tool_use block is present."""

    content: list[dict[str, Any]]
    stop_reason: str | None = None
    usage: dict[str, int] | None = None
    delay: float = 0.0
    model: str | None = None


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Error:
    """An error answer: HTTP `status` with the API's error body, or, with `mid_stream`,
    a 200 stream that starts normally and then carries an `event: error`."""

    status: int
    type: str = ""
    message: str = "fake error"
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    mid_stream: bool = False

    def __post_init__(self) -> None:
        self.type = self.type or ERROR_TYPES.get(self.status, "api_error")


@dataclass
class Drop:
    """Close the connection without answering. With `partial_stream`, start a stream first."""

    partial_stream: bool = False


@dataclass
class Cut:
    """Stream `reply` and close the connection after `events` SSE events (a stream cut off
    mid-answer: in the middle of a tool call's JSON, say). The events before the cut,
    `message_start` with its usage among them, reach the client as the real API sends them."""

    reply: Reply
    events: int


Answer = Reply | Error | Drop | Cut
Script = Iterable[Answer] | Callable[["Recorded"], Answer]


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    answer: str = ""
    time: float = 0.0

    @property
    def api_key(self) -> str | None:
        """The key the client sent, as `x-api-key` or as a bearer token (newer SDKs)."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None

    @property
    def tool_names(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools", []) or []]

    @property
    def last_user_text(self) -> str:
        """The text of the last user message, whether a string or blocks (tool results included)."""
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                return _flatten_text(message.get("content"))
        return ""

    @property
    def all_text(self) -> str:
        """Every piece of text in the request: system, messages, tool results."""
        parts = [_flatten_text(self.body.get("system"))]
        parts += [_flatten_text(m.get("content")) for m in self.body.get("messages", [])]
        return "\n".join(parts)

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the last user message."""
        messages = self.body.get("messages", [])
        if not messages or not isinstance(messages[-1].get("content"), list):
            return []
        return [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]


def _flatten_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_flatten_text(b) for b in content)
    if isinstance(content, dict):
        if content.get("type") == "text":
            return content.get("text", "")
        if content.get("type") == "tool_result":
            return _flatten_text(content.get("content"))
    return ""


# -- the server ------------------------------------------------------------------------------


class FakeAnthropic:
    """The server. Use as a context manager; `base_url` is where to point the client.

    With `key`, a request that does not carry that key is answered 401 like the real API.

    `script` may be set (or replaced) at any time through `.script`. When a list script
    runs out, the server answers 500 and records the fact in `.failures`, so a test that
    expected fewer calls fails loudly instead of hanging.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        model: str = "claude-sonnet-5-5",
        key: str | None = None,
        min_cache_tokens: int | dict[str, int] = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        # The API's prompt cache; `min_cache_tokens` is the models' minimum cacheable length.
        self.cache = PromptCache(min_tokens=min_cache_tokens, clock=clock)
        self.usage_by_request: dict[int, dict[str, Any]] = {}  # what each answered request was billed
        self.batches = FakeBatches(self)  # the Message Batches endpoints
        self.key = key
        self.requests: list[Recorded] = []
        self.failures: list[str] = []
        self.altered_thinking: list[str] = []
        self._signatures: dict[str, str] = {}
        self._lock = threading.Lock()
        self._script_items: list[Answer] = []
        self._script_fn: Callable[[Recorded], Answer] | None = None
        self.script = script if script is not None else []
        self._server = loopback.QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fakeapi", daemon=True)

    # script ---------------------------------------------------------------------------------

    @property
    def script(self) -> Script:
        return self._script_fn or list(self._script_items)

    @script.setter
    def script(self, value: Script) -> None:
        with self._lock:
            if callable(value):
                self._script_fn, self._script_items = value, []
            else:
                self._script_fn, self._script_items = None, list(value)

    def _next_answer(self, recorded: Recorded) -> Answer:
        with self._lock:
            if self._script_fn is None:
                if not self._script_items:
                    self.failures.append(f"script exhausted at request {len(self.requests)}")
                    return Error(500, "api_error", "fake server: script exhausted")
                return self._script_items.pop(0)
            fn = self._script_fn
        try:
            return fn(recorded)
        except Exception as exc:  # a broken test script must show up, not hang the client
            self.failures.append(f"script raised {exc!r}")
            return Error(500, "api_error", f"fake server: script raised {exc!r}")

    # lifecycle ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # what the tests read --------------------------------------------------------------------

    @property
    def messages_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    # usage with simulated prompt caching ----------------------------------------------------

    def _usage_for(self, body: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, int]:
        """Input tokens split into cache reads, cache writes and the rest, by the API's cache rules
        (`fakecache.PromptCache`: prefix match up to a mark, a minimum length, a 5-minute life)."""
        with self._lock:
            index = next(i for i in range(len(self.requests) - 1, -1, -1) if self.requests[i].body is body)
        split = self.cache.split(body, index)
        out_chars = len(json.dumps(content))
        usage = self.usage_by_request[index] = {
            "input_tokens": split.input_tokens,
            "output_tokens": max(1, out_chars // 4),
            "cache_creation_input_tokens": split.cache_write_tokens,
            "cache_read_input_tokens": split.cache_read_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": split.cache_write_tokens - split.cache_write_1h_tokens,
                "ephemeral_1h_input_tokens": split.cache_write_1h_tokens,
            },
        }
        return usage

    def _check_thinking(self, body: dict[str, Any]) -> None:
        for message in body.get("messages", []):
            if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if block.get("type") == "thinking":
                    sig = block.get("signature", "")
                    with self._lock:
                        original = self._signatures.get(sig)
                    if original is None or original != block.get("thinking"):
                        self.altered_thinking.append(sig)

    def _remember_thinking(self, content: list[dict[str, Any]]) -> None:
        with self._lock:
            for block in content:
                if block.get("type") == "thinking":
                    self._signatures[block["signature"]] = block["thinking"]


def _handler_for(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet: pytest shows failures, not every request."""

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            self._record({})
            path = self.path.split("?")[0]
            if path.startswith("/v1/messages/batches/"):
                batch_id, _, rest = path[len("/v1/messages/batches/") :].partition("/")
                if rest == "results":
                    data = fake.batches.results(batch_id)
                    if data is not None:
                        self.send_response(200)
                        self.send_header("Content-Type", "application/binary")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                        return
                elif (view := fake.batches.retrieve(batch_id)) is not None:
                    self._json(200, view)
                    return
            self._json(404, _error_body("not_found_error", f"fake server has no {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(400, _error_body("invalid_request_error", "body is not JSON"))
                return
            recorded = self._record(body)
            path = self.path.split("?")[0]
            if fake.key is not None and recorded.api_key != fake.key:
                recorded.answer = "Error"
                self._json(401, _error_body("authentication_error", "invalid x-api-key"))
                return
            if path == "/v1/messages/count_tokens":
                size = len(json.dumps(body))
                self._json(200, {"input_tokens": max(1, size // 4)})
                return
            if path == "/v1/messages/batches":
                if fake.batches.create_status is not None:
                    status = fake.batches.create_status
                    self._json(status, _error_body(ERROR_TYPES.get(status, "api_error"), "fake batch refusal"))
                    return
                self._json(200, fake.batches.create(body, recorded.headers))
                return
            if path != "/v1/messages":
                self._json(404, _error_body("not_found_error", f"fake server has no {path}"))
                return
            fake._check_thinking(body)
            answer = fake._next_answer(recorded)
            recorded.answer = type(answer).__name__
            if isinstance(answer, Drop):
                if answer.partial_stream and body.get("stream"):
                    self._start_message(body)
                loopback.drop(self)
                return
            if isinstance(answer, Error):
                self._error(answer, body)
                return
            if isinstance(answer, Cut):
                self._reply(answer.reply, body, cut_after=answer.events)
                return
            self._reply(answer, body)

        # -- plumbing --------------------------------------------------------------------------

        def _record(self, body: dict[str, Any]) -> Recorded:
            recorded = Recorded(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                time=time.monotonic(),
            )
            with fake._lock:
                fake.requests.append(recorded)
            return recorded

        def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            loopback.send_json(self, status, payload, {"request-id": f"req_fake{next(_ids):04d}", **(headers or {})})

        def _error(self, error: Error, body: dict[str, Any]) -> None:
            headers = dict(error.headers)
            if error.retry_after is not None:
                headers["retry-after"] = f"{error.retry_after:g}"
            if error.mid_stream and body.get("stream"):
                self._start_message(body)
                sse.send(self, _error_body(error.type, error.message), "error")
                sse.end(self)
                return
            self._json(error.status, _error_body(error.type, error.message), headers)

        def _reply(self, reply: Reply, body: dict[str, Any], cut_after: int | None = None) -> None:
            if reply.delay:
                time.sleep(reply.delay)
            content = [dict(b) for b in reply.content]
            fake._remember_thinking(content)
            stop = reply.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
            usage = reply.usage or fake._usage_for(body, content)
            model = reply.model or body.get("model") or fake.model
            if not body.get("stream"):
                message = _message_shell(body, model, usage)
                message.update(content=content, stop_reason=stop)
                self._json(200, message)
                return
            self._start_stream()
            start_usage = {k: v for k, v in usage.items() if k != "output_tokens"} | {"output_tokens": 1}
            events = [
                ("message_start", {"type": "message_start", "message": _message_shell(body, model, start_usage)}),
                ("ping", {"type": "ping"}),
            ]
            for index, block in enumerate(content):
                events += _block_events(index, block)
            events.append(
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": usage["output_tokens"]},
                    },
                )
            )
            events.append(("message_stop", {"type": "message_stop"}))
            for n, (event, data) in enumerate(events):
                if cut_after is not None and n >= cut_after:
                    loopback.drop(self)
                    return
                sse.send(self, data, event)
            sse.end(self)

        def _start_stream(self) -> None:
            sse.start(self, {"Cache-Control": "no-cache", "request-id": f"req_fake{next(_ids):04d}"})

        def _start_message(self, body: dict[str, Any]) -> None:
            """A stream that began as a message does (a drop or an error follows it)."""
            self._start_stream()
            shell = _message_shell(body, fake.model, {"input_tokens": 1, "output_tokens": 1})
            sse.send(self, {"type": "message_start", "message": shell}, "message_start")

    return Handler


def _message_shell(body: dict[str, Any], model: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": f"msg_fake{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, **usage},
    }


def _block_events(index: int, block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events that stream one content block, split into several deltas like the API does."""
    events: list[tuple[str, dict[str, Any]]] = []

    def delta(payload: dict[str, Any]) -> None:
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": payload}))

    kind = block["type"]
    if kind == "text":
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
        )
        for piece in _chunks(block["text"], 7):
            delta({"type": "text_delta", "text": piece})
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        for piece in _chunks(json.dumps(block["input"]), 11):
            delta({"type": "input_json_delta", "partial_json": piece})
    elif kind == "thinking":
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
        )
        for piece in _chunks(block["thinking"], 9):
            delta({"type": "thinking_delta", "thinking": piece})
        delta({"type": "signature_delta", "signature": block["signature"]})
    else:
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _chunks(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def _error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


if __name__ == "__main__":
    with FakeAnthropic(lambda recorded: Reply([text("hello")])) as server:
        print(f"fake Messages API at {server.base_url} (Ctrl-C to stop)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
