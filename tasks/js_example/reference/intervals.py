"""Merging closed integer intervals."""


def merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching intervals merged, sorted by start."""
    for start, end in intervals:
        if start > end:
            raise ValueError(f"bad interval ({start}, {end})")
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def total_length(intervals: list[tuple[int, int]]) -> int:
    return sum(end - start + 1 for start, end in merge(intervals))
