"""Router: (step, attempt history) → route. Pure: same inputs, same route."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from harness.config import HarnessConfig
from harness.llm import Route

__all__ = ["Router"]


@dataclass(frozen=True)
class Router:
    """Resolves a step to a route; escalates the fix tier after non-improving fixes.

    A step's output cap is the smaller of its route's `max_tokens` and the step's own
    (`step_max_tokens`), so a step that expects a short reply reserves for a short reply.
    """

    routes: dict[str, Route]
    steps: dict[str, str]
    escalate: bool
    escalate_after: int
    escalate_to: str
    step_max_tokens: Mapping[str, int] = field(default_factory=dict)
    judge_tier: str | None = None  # loop.judge.tier; None when no judge is configured
    judge_max_tokens: int | None = None

    @classmethod
    def from_config(cls, config: HarnessConfig, provider_override: str | None = None) -> Router:
        """Build the router; `provider_override` (e.g. "sim") sends every tier to one provider.

        `prompt_cache: false` uncaches the routes whose provider caches on request; a Gemini
        route stays cached, as Gemini caches an identical prefix on its own.
        """
        routes = {
            tier: Route(
                tier,
                provider_override or r.provider,
                r.model,
                r.max_tokens,
                r.service_tier,
                prompt_cache=config.prompt_cache or r.provider == "gemini",
                priced_by=r.provider if provider_override else "",
            )
            for tier, r in config.routes.items()
        }
        loop = config.loop
        return cls(
            routes,
            dict(config.steps),
            loop.escalate,
            loop.escalate_after,
            loop.escalate_to,
            dict(config.step_max_tokens),
            loop.judge.tier,
            loop.judge.max_tokens,
        )

    def route(self, step: str, non_improving_fixes: int = 0) -> Route:
        """The route for `step`, given how many fixes in a row failed to improve on the best."""
        return self.choices(step, non_improving_fixes)[0]

    def choices(self, step: str, non_improving_fixes: int = 0) -> tuple[Route, ...]:
        """The route for `step`, then the cheaper ones it may fall back to when the budget
        cannot fit the first one's worst case: an escalated fix falls back to the step's own
        tier. A step is never sent below the tier the operator gave it."""
        tier = self.steps[step]
        own = self._capped(step, self.routes[tier])
        if step == "fix" and self.escalate and non_improving_fixes >= self.escalate_after:
            escalated = self._capped(step, self.routes[self.escalate_to])
            return (escalated, own) if escalated != own else (own,)
        return (own,)

    def _capped(self, step: str, route: Route) -> Route:
        cap = self.step_max_tokens.get(step)
        return route if cap is None or cap >= route.max_tokens else replace(route, max_tokens=cap)

    def judge_route(self) -> Route:
        """The principle judge's route: its tier's, its output capped at the judge's own
        `max_tokens` (a verdict is short, so the call reserves for a short reply)."""
        if self.judge_tier is None:
            raise ValueError("no judge tier: the router was built without loop.judge")
        route = self.routes[self.judge_tier]
        cap = self.judge_max_tokens
        return route if cap is None or cap >= route.max_tokens else replace(route, max_tokens=cap)
