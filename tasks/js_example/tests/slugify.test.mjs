import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify } from '../src/slugify.mjs';

test('words are lower-cased and joined by dashes', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
});

test('accents are dropped', () => {
  assert.equal(slugify('Crème Brûlée à la carte'), 'creme-brulee-a-la-carte');
});

test('digits are kept', () => {
  assert.equal(slugify('Top 10 tips for 2024'), 'top-10-tips-for-2024');
});

test('long slugs are cut at a word boundary', () => {
  assert.equal(slugify('alpha beta gamma delta', 12), 'alpha-beta');
});

test('a single long word is cut hard', () => {
  assert.equal(slugify('abcdefghijkl', 5), 'abcde');
});

test('nothing sluggable gives an empty slug', () => {
  assert.equal(slugify('!!! ???'), '');
});
