"""Router: (step, attempt history) → route. Pure: same inputs, same route."""

from __future__ import annotations

from dataclasses import dataclass

from harness.config import HarnessConfig
from harness.providers.base import Route

__all__ = ["Router"]


@dataclass(frozen=True)
class Router:
    """Resolves a step to a route; escalates the fix tier after non-improving fixes."""

    routes: dict[str, Route]
    steps: dict[str, str]
    escalate: bool
    escalate_after: int
    escalate_to: str

    @classmethod
    def from_config(cls, config: HarnessConfig, provider_override: str | None = None) -> Router:
        """Build the router; `provider_override` (e.g. "sim") sends every tier to one provider."""
        routes = {
            tier: Route(tier, provider_override or r.provider, r.model, r.max_tokens)
            for tier, r in config.routes.items()
        }
        loop = config.loop
        return cls(routes, dict(config.steps), loop.escalate, loop.escalate_after, loop.escalate_to)

    def route(self, step: str, non_improving_fixes: int = 0) -> Route:
        """The route for `step`, given how many fixes in a row failed to improve on the best."""
        tier = self.steps[step]
        if step == "fix" and self.escalate and non_improving_fixes >= self.escalate_after:
            tier = self.escalate_to
        return self.routes[tier]
