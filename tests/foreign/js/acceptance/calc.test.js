const { test, describe, it } = require('node:test');
const assert = require('node:assert');
const { add, sub, mul } = require('../calc.js');

test('adds two numbers', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('subtracts', () => {
  assert.strictEqual(sub(5, 3), 2);
});

describe('multiplication', () => {
  it('multiplies', () => {
    assert.strictEqual(mul(2, 3), 6);
  });
});
