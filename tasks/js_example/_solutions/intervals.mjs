/** Merging closed integer intervals. */

/** Overlapping or touching intervals merged, sorted by start. */
export function merge(intervals) {
  for (const [start, end] of intervals) {
    if (start > end) {
      throw new RangeError(`bad interval (${start}, ${end})`);
    }
  }
  const sorted = [...intervals].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged = [];
  for (const [start, end] of sorted) {
    const last = merged[merged.length - 1];
    if (last && start <= last[1] + 1) {
      last[1] = Math.max(last[1], end);
    } else {
      merged.push([start, end]);
    }
  }
  return merged;
}

/** How many integer points the intervals cover. */
export function totalLength(intervals) {
  let total = 0;
  for (const [start, end] of merge(intervals)) {
    total += end - start + 1;
  }
  return total;
}
