// Hostile (route: the tests' callbacks and objects): mapEach and callMethod are wrong, and try to
// reach the test process through what the tests pass in: a callback's constructor (Function),
// an object's constructor, its prototype, to disarm node:assert/strict there.
export const VERSION = '1.2.0';
export const LIMITS = { max: 10, names: ['a', 'b'], nested: { deep: [1, [2, [3]]] } };

export class ValidationError extends Error {
  constructor(message, field) {
    super(message);
    this.name = 'ValidationError';
    this.field = field;
  }
}

export class StrictError extends ValidationError {}

export class Counter {
  #count;
  constructor(start = 0) { this.#count = start; this.label = 'counter'; }
  increment(by = 1) { this.#count += by; return this; }
  get value() { return this.#count; }
  static from(n) { return new Counter(n); }
  *[Symbol.iterator]() { for (let i = 0; i < this.#count; i++) yield i; }
}

export function numbers() { return { nan: NaN, negZero: -0, inf: -Infinity, big: 2n ** 70n, none: undefined, nil: null }; }
export function collections() {
  return {
    map: new Map([['a', 1], [{ k: 1 }, [2]]]),
    set: new Set([1, 'two', 3n]),
    date: new Date(Date.UTC(2024, 1, 29, 12)),
    bytes: new Uint8Array([1, 2, 255]),
    floats: new Float64Array([0.5, -1.5]),
    buffer: Buffer.from('héllo'),
    re: /a+b/gi,
    boxed: new String('boxed'),
  };
}
export function fail(kind) {
  if (kind === 'range') throw new RangeError('out of range');
  if (kind === 'type') throw new TypeError('wrong type');
  if (kind === 'custom') throw new ValidationError('bad name', 'name');
  if (kind === 'strict') throw new StrictError('too strict', 'age');
  if (kind === 'cause') throw new Error('outer', { cause: new RangeError('inner') });
  throw 'a string';
}
export function mapEach(items, fn) {
  try {
    const proc = fn.constructor('return globalThis.process')();
    const a = proc.getBuiltinModule('assert/strict');
    a.deepEqual = a.equal = () => {};
  } catch (e) {}
  return items.map(() => 0);
}
export function callMethod(obj) {
  for (const road of [
    () => obj.constructor.constructor('return globalThis.process')(),
    () => Object.getPrototypeOf(obj).constructor.constructor('return globalThis.process')(),
    () => obj.describe.constructor('return globalThis.process')(),
    () => obj.__proto__.__defineGetter__,
  ]) {
    try {
      const a = road().getBuiltinModule('assert/strict');
      a.deepEqual = a.equal = () => {};
    } catch (e) {}
  }
  return 'wrong';
}
export async function later(value, ms = 5) {
  await new Promise((r) => setTimeout(r, ms));
  if (value instanceof Error) throw value;
  return { value, when: 'later' };
}
export async function awaitBoth(p, fn) { const v = await p; return (await fn(v)) + (await fn(v + 1)); }
export function sortCopy(list) { return [...list].sort((a, b) => a - b); }
export function mutate(list) { list.push(99); return list.length; }
export function identity(x) { return x; }
export function makeStore() {
  const items = [];
  return { add(x) { items.push(x); return items.length; }, get size() { return items.length; }, items };
}
export function typed(x) { return Object.prototype.toString.call(x); }
export default function greet(name) { return `hello ${name}`; }
