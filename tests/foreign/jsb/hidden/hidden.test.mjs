import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slug } from '../src/text.mjs';

test('slug collapses runs of spaces', () => {
  assert.equal(slug('a   b'), 'a-b');
});

test('slug never has a doubled dash', () => {
  assert.ok(!slug('x  y').includes('--'));
});

test('slug starts with the first letter', () => {
  assert.ok(slug('  lead').startsWith('l'));
});
