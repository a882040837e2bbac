import { test } from 'node:test';
import assert from 'node:assert/strict';
import names, { double, half, NAME } from './names.js';

test('named imports of a CommonJS module', () => {
  assert.equal(double(4), 8);
  assert.equal(half(4), 2);
  assert.equal(NAME, 'names');
});

test('its default import is module.exports', () => {
  assert.equal(names.double(1), 2);
});
