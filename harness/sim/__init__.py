"""The seeded simulator: an offline provider (and its batch API) that degrades each task's
known-good solution the way real models err, so a whole night is rehearsable at $0."""

from __future__ import annotations

from harness.sim.batch import SimBatch, SimBatchScript
from harness.sim.provider import SimLatency, SimModel, SimProvider

__all__ = [
    "SimBatch",
    "SimBatchScript",
    "SimLatency",
    "SimModel",
    "SimProvider",
]
