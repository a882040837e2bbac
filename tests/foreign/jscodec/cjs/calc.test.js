const { test } = require('node:test');
const assert = require('node:assert');
const calc = require('./calc.js');

test('the module is the function', () => {
  assert.strictEqual(calc(2, 3), 5);
  assert.strictEqual(typeof calc, 'function');
});

test('its properties are reached through it', () => {
  assert.strictEqual(calc.sub(5, 3), 2);
  assert.deepStrictEqual(calc.stats([3, 1, 2]), { min: 1, max: 3, count: 3 });
});

test('a class hung on it constructs handles', () => {
  const acc = new calc.Acc();
  assert.strictEqual(acc.add(2).add(3).total, 5);
  assert.ok(acc instanceof calc.Acc);
});

test('errors thrown are the tests own TypeError', () => {
  assert.throws(() => calc.check('x'), TypeError);
  assert.throws(() => calc.check('x'), /not a number: x/);
});
