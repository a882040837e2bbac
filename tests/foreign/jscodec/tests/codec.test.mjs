import { test } from 'node:test';
import assert from 'node:assert/strict';
import greet, * as m from '../codec.mjs';

test('constants cross by value', () => {
  assert.equal(m.VERSION, '1.2.0');
  assert.deepEqual(m.LIMITS, { max: 10, names: ['a', 'b'], nested: { deep: [1, [2, [3]]] } });
});

test('the default export', () => {
  assert.equal(greet('ada'), 'hello ada');
});

test('numbers keep NaN, -0, infinities, bigints, undefined and null', () => {
  const n = m.numbers();
  assert.ok(Number.isNaN(n.nan));
  assert.ok(Object.is(n.negZero, -0));
  assert.equal(n.inf, -Infinity);
  assert.equal(n.big, 2n ** 70n);
  assert.ok('none' in n);
  assert.equal(n.none, undefined);
  assert.equal(n.nil, null);
});

test('maps, sets, dates, typed arrays, buffers, regexps and boxed strings are the tests own', () => {
  const c = m.collections();
  assert.ok(c.map instanceof Map);
  assert.equal(c.map.get('a'), 1);
  assert.deepEqual([...c.map.values()][1], [2]);
  assert.deepEqual(c.set, new Set([1, 'two', 3n]));
  assert.ok(c.date instanceof Date);
  assert.equal(c.date.toISOString(), '2024-02-29T12:00:00.000Z');
  assert.deepEqual(c.bytes, new Uint8Array([1, 2, 255]));
  assert.deepEqual(c.floats, new Float64Array([0.5, -1.5]));
  assert.ok(Buffer.isBuffer(c.buffer));
  assert.equal(c.buffer.toString(), 'héllo');
  assert.deepEqual(c.re, /a+b/gi);
  assert.deepEqual(c.boxed, new String('boxed'));
});

test('built-in errors are the tests own classes', () => {
  assert.throws(() => m.fail('range'), RangeError);
  assert.throws(() => m.fail('type'), { name: 'TypeError', message: 'wrong type' });
  assert.throws(() => m.fail('cause'), (err) => err.cause instanceof RangeError && err.message === 'outer');
});

test('the candidate error classes match with instanceof and keep their fields', () => {
  assert.throws(() => m.fail('custom'), m.ValidationError);
  assert.throws(() => m.fail('custom'), { name: 'ValidationError', message: 'bad name', field: 'name' });
  assert.throws(() => m.fail('strict'), m.ValidationError);
  assert.throws(() => m.fail('strict'), m.StrictError);
  assert.throws(() => m.fail('strict'), Error);
  assert.throws(() => m.fail('custom'), (err) => !(err instanceof m.StrictError));
});

test('a thrown string is a string', () => {
  assert.throws(() => m.fail('other'), (err) => err === 'a string');
});

test('class instances are handles: methods, getters, statics, chaining, instanceof', () => {
  const c = new m.Counter(2);
  assert.ok(c instanceof m.Counter);
  assert.equal(c.increment().increment(3).value, 6);
  assert.equal(c.label, 'counter');
  assert.equal(m.Counter.from(4).value, 4);
  assert.deepEqual([...m.Counter.from(3)], [0, 1, 2]);
  c.label = 'renamed';
  assert.equal(c.label, 'renamed');
});

test('callbacks are called across, sync, with their results', () => {
  const seen = [];
  assert.deepEqual(m.mapEach([1, 2, 3], (x, i) => { seen.push(i); return x * 10; }), [10, 20, 30]);
  assert.deepEqual(seen, [0, 1, 2]);
});

test('an object with methods passed in is reached by its methods', () => {
  class Thing { constructor() { this.name = 'thing'; } describe(s) { return `${s}!`; } }
  assert.equal(m.callMethod(new Thing()), 'x!:thing');
  assert.equal(m.callMethod({ name: 'plain', describe: (s) => s + s }), 'xx:plain');
});

test('async functions return promises that settle across', async () => {
  assert.deepEqual(await m.later(7), { value: 7, when: 'later' });
  await assert.rejects(m.later(new RangeError('late')), RangeError);
  assert.equal(await m.awaitBoth(Promise.resolve(1), async (v) => v * 2), 6);
});

test('arguments are copies, results fresh values', () => {
  const list = [3, 1, 2];
  assert.deepEqual(m.sortCopy(list), [1, 2, 3]);
  assert.deepEqual(list, [3, 1, 2]);
  const obj = { a: 1 };
  assert.deepEqual(m.identity(obj), obj);
});

test('a function passed through comes back as itself', () => {
  const fn = () => 1;
  assert.equal(m.identity(fn), fn);
});

test('an object with behaviour is a live handle', () => {
  const store = m.makeStore();
  assert.equal(store.add('x'), 1);
  assert.equal(store.add('y'), 2);
  assert.equal(store.size, 2);
  assert.deepEqual(store.items, ['x', 'y']);
});

test('values the tests pass are plain values on the other side', () => {
  assert.equal(m.typed(new Map()), '[object Map]');
  assert.equal(m.typed(new Date(0)), '[object Date]');
  assert.equal(m.typed([1]), '[object Array]');
});
