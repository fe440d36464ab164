"""`all_or_none`: asyncio.gather for the works of one step, training or validation alike.

When one work raises something that abandons the step (a stop, a fatal backend error),
the others are cancelled and awaited; plain gather would leave them running unattended
after the step has been given up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any


async def all_or_none(coroutines: list[Awaitable[Any]]) -> list[Any]:
    """The results of every coroutine, or the first exception with the rest cancelled."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
