"""Context tools: what a write or fix step may read on request, and where it may not."""

from harness.context.confine import Confinement, Refusal
from harness.context.reads import changed, fingerprint
from harness.context.tools import TOOLS, Limits, ResultLog, ToolBox

__all__ = [
    "TOOLS",
    "Confinement",
    "Limits",
    "Refusal",
    "ResultLog",
    "ToolBox",
    "changed",
    "fingerprint",
]
