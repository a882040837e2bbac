"""Git delivery: a night's shipped outputs committed to a branch of their own through a
worktree of its own (docs/morning-after.md#git-delivery); the runner opens it at start-up."""

from __future__ import annotations

from harness.deliver.delivery import GitDelivery
from harness.deliver.git import DeliveryError

__all__ = ["DeliveryError", "GitDelivery"]
