import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slug } from '../src/text.mjs';

test('slug lowercases and joins words with a dash', () => {
  assert.equal(slug('Hello World'), 'hello-world');
});

test('slug keeps digits', () => {
  assert.equal(slug('Route 66'), 'route-66');
});
