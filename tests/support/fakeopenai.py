"""A fake OpenAI-compatible chat-completions server on the loopback interface, for the `openai` backend's tests.

The real `openai` SDK is pointed at it with `base_url` / `OPENAI_BASE_URL`, so the tests
exercise the client's HTTP, JSON, server-sent events, error statuses and retry headers;
nothing is mocked below the socket. It speaks what OpenAI, vLLM, Ollama and OpenRouter
share:

- `POST /v1/chat/completions`, as SSE when the body has `"stream": true` (a role chunk,
  content deltas in pieces, tool calls put together by `index` from an id-and-name chunk
  and argument fragments, a `finish_reason` chunk, and with `stream_options.include_usage`
  a last chunk with no choices and the usage), else as one JSON answer;
- errors in OpenAI's shape (`{"error": {"message", "type", "code"}}`) with any status and
  an optional `retry-after`; an error event inside a 200 stream (`mid_stream`);
- a dropped connection (`Drop`), a stream cut after some chunks (`Cut`), and one whose
  data line after some chunks is not JSON (`Garbled`);
- a model without tool support: with `tools_supported=False`, a request that offers tools
  is answered 400 with Ollama's words ("... does not support tools").

Usage is computed, not scripted: prompt tokens are the request's messages and tools in
characters / 4, completion tokens the answer's; `cached_tokens` is the longest prefix of
the serialised messages an earlier request sent (characters / 4), when it reaches
`min_cache_tokens`, as a provider's automatic prefix cache reports it. With `report_cost`
the usage carries OpenRouter's `cost` field; with `report_usage=False` a stream carries no
usage at all, as servers that ignore `stream_options` send it.

A script is a list of answers taken in order, or a callable that looks at each recorded
request and decides (and may block, to hold a call open while a test kills its client).
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

_ids = itertools.count(1)


def call(name: str, args: dict[str, Any], id: str | None = None) -> dict[str, Any]:  # noqa: A002
    """A tool call as the server sends it."""
    return {"id": id or f"call_fake{next(_ids):04d}", "name": name, "arguments": json.dumps(args)}


@dataclass
class Reply:
    """A successful answer: text, tool calls, or both. `finish_reason` defaults from the calls."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    model: str | None = None


@dataclass
class Error:
    status: int
    message: str = "fake error"
    code: str | None = None
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    mid_stream: bool = False


@dataclass
class Drop:
    """Close the connection without answering."""


@dataclass
class Cut:
    """Stream `reply` and close the connection after `chunks` SSE chunks."""

    reply: Reply
    chunks: int


@dataclass
class Garbled:
    """Stream `reply`'s first `chunks` SSE chunks, then a data line that is not JSON, then the end.

    What a proxy that mangles a stream, or a server with a broken serializer, sends."""

    reply: Reply
    chunks: int = 2
    data: str = '{"id": "chatcmpl-fake", "choices": [{"delta": {"content": "half'


Answer = Reply | Error | Drop | Cut | Garbled
Script = Iterable[Answer] | Callable[["Recorded"], Answer]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    answer: str = ""

    @property
    def api_key(self) -> str | None:
        auth = self.headers.get("authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None

    @property
    def system(self) -> str:
        return "\n".join(str(m.get("content")) for m in self.messages if m.get("role") == "system")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.body.get("tools", []) or []]

    @property
    def first_user_text(self) -> str:
        return next((str(m.get("content")) for m in self.messages if m.get("role") == "user"), "")

    @property
    def all_text(self) -> str:
        return "\n".join(str(m.get("content") or "") for m in self.messages)

    def assistant_turns(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def tool_results(self) -> list[str]:
        """The tool results sent after the last assistant turn."""
        results: list[str] = []
        for message in reversed(self.messages):
            if message.get("role") != "tool":
                break
            results.append(str(message.get("content")))
        return results[::-1]


class FakeOpenAI:
    """The server; use as a context manager. `base_url` ends in /v1, as OpenAI-compatible servers' do."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        key: str | None = None,
        tools_supported: bool = True,
        min_cache_tokens: int = 0,
        report_cost: float | None = None,
        report_usage: bool = True,
    ) -> None:
        self.key = key
        self.report_usage = report_usage
        self.tools_supported = tools_supported
        self.min_cache_tokens = min_cache_tokens
        self.report_cost = report_cost
        self.requests: list[Recorded] = []
        self.failures: list[str] = []
        self._sent: list[str] = []
        self._lock = threading.Lock()
        self._items: list[Answer] = []
        self._fn: Callable[[Recorded], Answer] | None = None
        self.script = script if script is not None else []
        self._server = loopback.QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def script(self) -> Script:
        return self._fn or list(self._items)

    @script.setter
    def script(self, value: Script) -> None:
        with self._lock:
            if callable(value):
                self._fn, self._items = value, []
            else:
                self._fn, self._items = None, list(value)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/chat/completions"]

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, recorded: Recorded) -> Answer:
        with self._lock:
            if self._fn is None:
                if not self._items:
                    self.failures.append(f"script exhausted at request {len(self.requests)}")
                    return Error(500, "fake server: script exhausted")
                return self._items.pop(0)
            fn = self._fn
        try:
            return fn(recorded)
        except Exception as exc:  # a broken script must show up, not hang the client
            self.failures.append(f"script raised {exc!r}")
            return Error(500, f"fake server: script raised {exc!r}")

    def usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        sent = json.dumps(body.get("messages", []))
        prompt = max(1, (len(sent) + len(json.dumps(body.get("tools") or []))) // 4)
        with self._lock:
            common = max((_common_prefix(sent, earlier) for earlier in self._sent), default=0)
            self._sent.append(sent)
        cached = common // 4 if common // 4 >= max(1, self.min_cache_tokens) else 0
        out = max(1, (len(reply.text) + len(json.dumps(reply.tool_calls))) // 4)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": out,
            "total_tokens": prompt + out,
            "prompt_tokens_details": {"cached_tokens": min(cached, prompt)},
        }
        if self.report_cost is not None:
            usage["cost"] = self.report_cost
        return usage


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet."""

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            recorded = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            with fake._lock:
                fake.requests.append(recorded)
            if self.path.split("?")[0] != "/v1/chat/completions":
                loopback.send_json(self, 404, _error("fake server has no " + self.path, "not_found"))
                return
            if fake.key is not None and recorded.api_key != fake.key:
                loopback.send_json(self, 401, _error("Incorrect API key provided", "invalid_api_key"))
                return
            if body.get("tools") and not fake.tools_supported:
                model = body.get("model")
                loopback.send_json(
                    self, 400, _error(f"registry.ollama.ai/library/{model}:latest does not support tools", None)
                )
                return
            answer = fake._next(recorded)
            recorded.answer = type(answer).__name__
            if isinstance(answer, Drop):
                loopback.drop(self)
            elif isinstance(answer, Error):
                self._error(answer, body)
            elif isinstance(answer, Cut):
                self._reply(answer.reply, body, cut_after=answer.chunks)
            elif isinstance(answer, Garbled):
                self._reply(answer.reply, body, cut_after=answer.chunks, garbled=answer.data)
            else:
                self._reply(answer, body)

        def _error(self, error: Error, body: dict[str, Any]) -> None:
            headers = dict(error.headers)
            if error.retry_after is not None:
                headers["retry-after"] = f"{error.retry_after:g}"
            if error.mid_stream and body.get("stream"):
                sse.start(self)
                sse.send(self, _chunk(body, {"role": "assistant", "content": ""}))
                sse.send(self, _error(error.message, error.code))
                self._end()
                return
            loopback.send_json(self, error.status, _error(error.message, error.code), headers)

        def _reply(
            self, reply: Reply, body: dict[str, Any], cut_after: int | None = None, garbled: str | None = None
        ) -> None:
            finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
            usage = fake.usage(body, reply)
            model = reply.model or body.get("model")
            if not body.get("stream"):
                message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
                if reply.tool_calls:
                    message["tool_calls"] = [_wire(c) for c in reply.tool_calls]
                answer = {
                    "id": f"chatcmpl-{next(_ids)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                }
                loopback.send_json(self, 200, answer)
                return
            chunks = [_chunk(body, {"role": "assistant", "content": ""}, model=model)]
            chunks += [_chunk(body, {"content": piece}, model=model) for piece in _pieces(reply.text, 7)]
            for index, tool_call in enumerate(reply.tool_calls):
                head = {"index": index, "id": tool_call["id"], "type": "function"}
                head["function"] = {"name": tool_call["name"], "arguments": ""}
                chunks.append(_chunk(body, {"tool_calls": [head]}, model=model))
                for piece in _pieces(tool_call["arguments"], 11):
                    chunks.append(_chunk(body, {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
            chunks.append(_chunk(body, {}, finish=finish, model=model))
            if (body.get("stream_options") or {}).get("include_usage") and fake.report_usage:
                chunks.append({**_chunk(body, {}, model=model), "choices": [], "usage": usage})
            sse.start(self)
            for n, chunk in enumerate(chunks):
                if cut_after is not None and n >= cut_after:
                    if garbled is None:
                        loopback.drop(self)
                        return
                    sse.send(self, garbled)  # a data line that is not JSON, in a stream that then ends
                    break
                sse.send(self, chunk)
            self._end()

        def _end(self) -> None:
            sse.send(self, "[DONE]")
            sse.end(self)

    return Handler


def _chunk(body: dict[str, Any], delta: dict[str, Any], finish: str | None = None, model: str | None = None) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model or body.get("model"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _wire(tool_call: dict[str, Any]) -> dict[str, Any]:
    function = {"name": tool_call["name"], "arguments": tool_call["arguments"]}
    return {"id": tool_call["id"], "type": "function", "function": function}


def _pieces(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


def _error(message: str, code: str | None, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
