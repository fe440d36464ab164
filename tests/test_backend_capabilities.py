"""Backend capabilities are declared in the `Backend` protocol, with defaults in `BackendBase`, and read directly."""

from __future__ import annotations

from skilltui.agents.base import BackendBase, Connection
from skilltui.agents.mailbox import MailboxBackend
from skilltui.agents.offline import OfflineBackend
from skilltui.agents.openai_backend import OpenAIBackend
from skilltui.agents.routing import RoleRouter, backend_name


def test_every_backend_has_the_capabilities_with_their_defaults(tmp_path) -> None:
    (tmp_path / "box").mkdir()
    mailbox = MailboxBackend(f"mailbox:{tmp_path / 'box'}")
    assert isinstance(mailbox, BackendBase)
    assert (mailbox.deterministic, mailbox.throttle, mailbox.checks_models) == (False, None, False)
    assert mailbox.preflight({"loss": "m"}) == [] and mailbox.for_role("loss") is mailbox
    offline = OfflineBackend()
    assert offline.deterministic and not OfflineBackend(noise=0.2).deterministic
    assert backend_name(offline, "loss") == "offline"


def test_a_router_has_what_its_backends_have() -> None:
    openai = OpenAIBackend("llama3", Connection(None, "http://127.0.0.1:9/v1"))  # never called
    router = RoleRouter(OfflineBackend(), {"backward": openai})
    assert router.checks_models  # the openai backend checks its models before a run
    assert not router.deterministic  # validation may repeat only what every backend answers the same
    assert router.throttle is not None and router.throttle.throttles == [openai.throttle]
    assert backend_name(router, "consolidate") == "openai" and backend_name(router, "loss") == "offline"
    assert not RoleRouter(OfflineBackend(), {"loss": OfflineBackend()}).checks_models
