"""The backend a `train` run calls, made from its settings, and checked before the run is opened.

`train` asks here for two things it must know before anything is written: which backend
each role calls (`--backend`, and `--role-model ROLE=BACKEND:MODEL` for roles that call
another, routed by `agents.routing.RoleRouter`), and whether the servers answer and the
agents' models can call tools (`preflight`): a refused connection or a model without tool
support is bad input, said in one line with no run folder made.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypedDict

from ..agents import BACKENDS, make_backend, pricing
from ..agents.base import Backend
from ..agents.routing import RoleRouter, parse_role_model

if TYPE_CHECKING:
    from ..engine.settings import Settings


class RoleSettings(TypedDict):
    """The two Settings fields `--role-model` fills (a TypedDict, so `Settings(**them)` is checked)."""

    role_models: dict[str, str]
    role_backends: dict[str, str]


def role_settings(items: list[str], backend: str) -> RoleSettings:
    """`--role-model` values as the Settings fields `role_models` and `role_backends`."""
    role_models: dict[str, str] = {}
    role_backends: dict[str, str] = {}
    for item in items:
        role, other, model = parse_role_model(item, BACKENDS)
        role_models[role] = model
        if other is not None and other != backend:
            role_backends[role] = other
    return {"role_models": role_models, "role_backends": role_backends}


def backend_for_run(settings: Settings) -> Backend:
    """The run's backend; with roles on other backends, one that sends each role to its own."""

    def made(name: str) -> Backend:
        return make_backend(
            name,
            settings.model if name == settings.backend else None,
            offline_latency=settings.offline_latency,
            offline_noise=settings.offline_noise,
            offline_noise_call=settings.offline_noise_call,
            base_url=settings.base_url,
        )

    default = made(settings.backend)
    if not settings.role_backends:
        return default
    others = {name: made(name) for name in sorted(set(settings.role_backends.values()))}
    return RoleRouter(default, {role: others[name] for role, name in settings.role_backends.items()})


def preflight(settings: Settings, backend: Backend) -> None:
    """Ask each backend that can check its models to do so, after the inputs are checked, before the run exists.

    The inputs first, so a missing story costs no request; a backend that cannot check (offline,
    anthropic) is left alone, and its first call says what is wrong as it does today.
    """
    if not backend.checks_models:
        return
    from ..estimate.plan import check_inputs

    check_inputs(settings)
    models = settings.models_by_role(backend.model)
    for line in backend.preflight(models):
        print(line, file=sys.stderr)
    unpriced = sorted({m for m in models.values() if pricing.price_for(m) is None})
    if settings.max_cost is not None and unpriced:
        # Said, not refused: a local model costs nothing per token, and OpenRouter reports its own price.
        print(
            f"--max-cost counts only calls with a price: {', '.join(unpriced)} has none in the table "
            "(only a cost its server reports counts)",
            file=sys.stderr,
        )
