"""Checks every batch adapter makes before it sends anything."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.llm import BatchItem, BatchLimits

__all__ = ["one_model"]


def one_model(
    items: Sequence[BatchItem], provider: str, limits: BatchLimits, ids: re.Pattern[str]
) -> str:
    """The batch's one model. An empty, mixed or oversized batch, one for another provider,
    or custom_ids that repeat or break the vendor's rule `ids`, is the caller's bug: a
    ValueError, nothing sent."""
    if not items:
        raise ValueError("a batch needs at least one request")
    if len(items) > limits.max_requests:
        raise ValueError(
            f"batch of {len(items)} requests is over the limit of {limits.max_requests}: "
            "split it into smaller batches"
        )
    routes = {(i.request.route.provider, i.request.route.model) for i in items}
    if len(routes) != 1 or next(iter(routes))[0] != provider:
        raise ValueError(
            f"one {provider} batch is one {provider} model, got {sorted(routes)}: "
            "group the items by route before submitting"
        )
    custom_ids = [i.custom_id for i in items]
    bad = [c for c in custom_ids if not ids.fullmatch(c)]
    if bad or len(set(custom_ids)) != len(custom_ids):
        raise ValueError(
            f"custom_ids must be unique and match {ids.pattern}: {bad[:5] or 'duplicates'}"
        )
    return next(iter(routes))[1]
