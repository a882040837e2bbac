import { test } from 'node:test';
import assert from 'node:assert/strict';
import { merge, totalLength } from '../src/intervals.mjs';

test('overlapping intervals merge', () => {
  assert.deepEqual(merge([[1, 3], [2, 6], [8, 10]]), [[1, 6], [8, 10]]);
});

test('touching intervals merge', () => {
  assert.deepEqual(merge([[1, 2], [3, 4]]), [[1, 4]]);
});

test('the result is sorted by start', () => {
  assert.deepEqual(merge([[20, 25], [1, 2]]), [[1, 2], [20, 25]]);
});

test('a reversed interval is refused', () => {
  assert.throws(() => merge([[5, 1]]), RangeError);
});

test('total length counts each point once', () => {
  assert.equal(totalLength([[1, 3], [2, 6], [10, 10]]), 7);
});
