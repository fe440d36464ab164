"""The unattended reviewer of `--auto`, one side of the review protocol (`model.review`).

After a backward micro-step passes its checks, the engine awaits
`reviewer.review(request)` and acts on the `Decision` it returns:

- approve: the commit stands and the loop goes on;
- rerun: the pool goes back to the commit before, the attempt stays on record, and the
  backward pass runs again with the reviewer's note in its prompt;
- rollback: the pool goes back to the commit before and the loop goes on without it.

With `--candidates K` the request shows the best-ranked candidate first (`candidates.rank`:
what the gate would keep, lowest validation delta first), so following the gate on it keeps
the best candidate that clears, or rolls all of them back.

`--auto` plugs in `AutoReviewer`; the terminal app plugs in a person. Nothing else differs
between the two modes, which is why this is a protocol and not a flag.
"""

from __future__ import annotations

from ...model.review import Action, Decision, ReviewRequest


class AutoReviewer:
    """The unattended reviewer of `--auto`: it approves every micro-step that passed its checks,
    except that with `--gate` it follows the gate: a micro-step whose interval on the change in
    validation loss is not below zero (worse, a tie, or unclear) is rolled back."""

    def __init__(self, action: Action = "approve") -> None:
        self.action = action

    async def review(self, request: ReviewRequest) -> Decision:
        gate = request.gate
        if gate is not None and gate.advice == "rollback":
            return Decision("rollback", "auto", reason=gate.reason)
        return Decision(self.action, "auto", reason=gate.reason if gate is not None else "")
