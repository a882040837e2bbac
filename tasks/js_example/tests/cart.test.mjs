import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineTotal, cartTotal } from '../src/cart.mjs';

test('a line is price times quantity', () => {
  assert.equal(lineTotal(250, 3), 750);
});

test('ten or more items take 10% off, rounded down', () => {
  assert.equal(lineTotal(199, 10), 1791);
});

test('negative quantities are refused', () => {
  assert.throws(() => lineTotal(100, -1), RangeError);
});

test('the coupon comes off before tax', () => {
  assert.equal(cartTotal([[1000, 1], [500, 2]], { coupon: 500, taxPercent: 20 }), 1800);
});

test('a coupon never makes the total negative', () => {
  assert.equal(cartTotal([[100, 1]], { coupon: 500, taxPercent: 20 }), 0);
});

test('tax rounds half up to the cent', () => {
  assert.equal(cartTotal([[25, 1]], { taxPercent: 10 }), 28);
});
