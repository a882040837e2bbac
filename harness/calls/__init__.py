"""The paid-call layer: every try is reserved, sent, priced, settled and recorded, under the one
retry policy and the credential gate. Adapters below it only send; the runner above only asks."""

from __future__ import annotations

from harness.calls.caller import Caller, CallLog, Rounds, RunStopped, charge
from harness.calls.gate import Gates, LocalGates
from harness.calls.retry import RetryPolicy
from harness.calls.tries import log_call

__all__ = [
    "CallLog",
    "Caller",
    "Gates",
    "LocalGates",
    "RetryPolicy",
    "Rounds",
    "RunStopped",
    "charge",
    "log_call",
]
