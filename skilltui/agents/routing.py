"""One run, several backends: each role's calls go to the backend `--role-model ROLE=BACKEND:MODEL` named.

Notes are trained for the model that will use them, but the model that edits them need not
be that one: a run can write with a local model behind vLLM (`writer=openai:llama3`) and
update the notes with Claude (`backward=anthropic:claude-...`). The engine keeps calling one
`Backend`; `RoleRouter` is that backend and passes each request to the one its role was
given, the run's `--backend` for the others. A consolidation is a backward micro-step of
another kind, so it goes where backward goes, as `Settings.model_for` sends it to
backward's model.

`--role-model` values are parsed here too (`parse_role_model`), since what a backend name
is belongs to the registry: `ROLE=MODEL` keeps the run's backend, `ROLE=BACKEND:MODEL`
names another. A model id may itself hold a colon (Ollama's `llama3:8b`), so only a known
backend's name before the first colon is read as a backend.
"""

from __future__ import annotations

from ..core.errors import UsageError
from .base import Backend, BackendBase, CallResult, Request
from .throttle import OnChange, ThrottleView
from .tools import Sandbox

# The roles a run calls, with the names people use for them.
ROLE_NAMES = {
    "forward": "forward",
    "writer": "forward",
    "loss": "loss",
    "judge": "loss",
    "reduce": "reduce",
    "backward": "backward",
    "consolidate": "consolidate",
}


def parse_role_model(item: str, backends: tuple[str, ...]) -> tuple[str, str | None, str]:
    """`ROLE=MODEL` or `ROLE=BACKEND:MODEL` -> (role, backend or None, model); UsageError when malformed."""
    name, _, value = item.partition("=")
    role = ROLE_NAMES.get(name.strip().lower())
    head, colon, rest = value.partition(":")
    backend = head if colon and head in backends else None
    model = rest if backend else value
    if role is None or not model.strip():
        roles = ", ".join(ROLE_NAMES)
        raise UsageError(
            f"--role-model {item!r}: use ROLE=MODEL or ROLE=BACKEND:MODEL with ROLE one of {roles} "
            f"and BACKEND one of {', '.join(backends)} (e.g. writer=openai:llama3)"
        )
    return role, backend, model.strip()


def backend_role(role: str) -> str:
    """The role whose backend a request of `role` goes to (a consolidation goes where backward goes)."""
    return "backward" if role == "consolidate" else role


class RoleRouter(BackendBase):
    """The run's backend when roles use different ones; passes each call to its role's backend."""

    def __init__(self, default: Backend, by_role: dict[str, Backend]) -> None:
        self.default = default
        self.by_role = dict(by_role)
        self.name = default.name
        self.model = default.model
        self.throttle = _Throttles([b.throttle for b in self.backends if b.throttle is not None])
        self.checks_models = any(b.checks_models for b in self.backends)

    @property
    def deterministic(self) -> bool:
        """Validation may repeat only what every backend answers the same way each time."""
        return all(b.deterministic for b in self.backends)

    @property
    def backends(self) -> list[Backend]:
        unique: list[Backend] = []
        for b in [self.default, *self.by_role.values()]:
            if all(b is not u for u in unique):
                unique.append(b)
        return unique

    def for_role(self, role: str) -> Backend:
        return self.by_role.get(backend_role(role), self.default)

    def name_for(self, role: str) -> str:
        return self.for_role(role).name

    async def text(self, request: Request) -> CallResult:
        return await self.for_role(request.role).text(request)

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        return await self.for_role(request.role).agent(request, sandbox)

    def preflight(self, models: dict[str, str]) -> list[str]:
        """Each backend that checks its models before a run checks the ones of its own roles."""
        lines: list[str] = []
        for b in self.backends:
            mine = {role: m for role, m in models.items() if self.for_role(role) is b}
            if b.checks_models and mine:
                lines += b.preflight(mine)
        return lines


class _Throttles:
    """The routed backends' throttles, told as one whom to tell when one engages or lifts."""

    def __init__(self, throttles: list[ThrottleView]) -> None:
        self.throttles = throttles

    @property
    def on_change(self) -> OnChange | None:
        return self.throttles[0].on_change if self.throttles else None

    @on_change.setter
    def on_change(self, value: OnChange | None) -> None:
        for throttle in self.throttles:
            throttle.on_change = value


def backend_name(backend: Backend, role: str) -> str:
    """Which backend served a call of `role`: the routed one's name when roles use different ones."""
    return backend.name_for(role)
