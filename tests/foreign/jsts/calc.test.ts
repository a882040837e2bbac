const { test } = require('node:test');
const assert = require('node:assert');
const { add, label } = require('./calc.ts');

test('adds in TypeScript', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('labels a number', () => {
  assert.strictEqual(label(-1), 'negative');
});
