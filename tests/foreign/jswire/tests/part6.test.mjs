// One of six test files (each its own test process, each its own candidate process): more
// test processes than the tickets the harness issues before the first one asks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { big, measure, relay, later, burst } from '../wire.mjs';

const SIZE = (1 << 20) * 6; // past any pipe's buffer

test('part 6: a large value crosses each way', () => {
  assert.equal(big(SIZE).length, SIZE);
  assert.equal(measure('z'.repeat(SIZE)), SIZE);
});

test('part 6: a callback called with a large value answers one', () => {
  const total = relay((text) => text + text, 'q'.repeat(SIZE));
  assert.equal(total, 3 * SIZE + 2);
});

test('part 6: settlements in bursts, while calls are under way', async () => {
  const pending = Array.from({ length: 40 }, (_, k) => later(k));
  assert.equal(measure('w'.repeat(1000)), 1000); // a call while the settlements arrive
  assert.deepEqual(await Promise.all(pending), Array.from({ length: 40 }, (_, k) => k));
  assert.deepEqual(await Promise.all(burst(25)), Array.from({ length: 25 }, (_, k) => k));
});
