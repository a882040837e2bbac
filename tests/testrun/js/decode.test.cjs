// The tests' side of the JavaScript boundary decodes what a candidate's process sends strictly:
// only the codec's tags, only the test realm's own constructors, nothing that sets a prototype,
// names a built-in by a key of Object.prototype, or refers to an object it was never given.
// Run by tests/testrun/test_jsboundary.py with `node --test`, the channel's path in argv.
const { test } = require('node:test');
const assert = require('node:assert/strict');

const { Channel, ProtocolError } = require(process.env.JSNODE_CHANNEL);

function decoder() {
  const chan = Object.create(Channel.prototype);
  Object.assign(chan, {
    side: 'tests', trusting: false, local: new Map(), localIds: new WeakMap(), remote: new Map(),
    remoteIds: new WeakMap(), protos: new WeakMap(), promises: new Map(), nextId: 1,
    wire: { ref() {}, unref() {} },
  });
  return chan;
}

const refused = {
  'a number named by a key of Object.prototype': { t: 'n', v: 'constructor' },
  'a built-in function that is not an error class': { t: 'bf', n: 'Function' },
  'a built-in named by a key of Object.prototype': { t: 'bf', n: 'constructor' },
  'a typed array of an unknown kind': { t: 'ta', k: 'constructor', v: '' },
  'a boxed value of an unknown kind': { t: 'box', k: '__proto__', v: 'x' },
  'a boxed string that holds a number': { t: 'box', k: 'String', v: 1 },
  'an error of an unknown base': { t: 'e', b: 'Function', n: 'x', m: 'x' },
  'a reference to an object never given': { t: 'ref', id: 7 },
  'an unknown tag': { t: 'eval', v: '1' },
  'a raw list': [1, 2],
  'a raw object': { a: 1 },
  'an object with a key that is not a string': { t: 'o', v: [[1, 2]] },
  'a map that is not pairs': { t: 'm', v: [[1]] },
  'a malformed bigint': { t: 'bi', v: '1e3' },
  'a malformed handle kind': { t: 'h', k: 'x', id: 1 },
};

for (const [what, value] of Object.entries(refused)) {
  test(`refused: ${what}`, () => {
    assert.throws(() => decoder().decode(value), ProtocolError);
  });
}

test('refused: a value deeper than 200 levels', () => {
  let value = 1;
  for (let i = 0; i < 300; i++) value = { t: 'a', v: [value] };
  assert.throws(() => decoder().decode(value), ProtocolError);
});

test('a __proto__ key is an own property, never the prototype', () => {
  const evil = { t: 'o', v: [['__proto__', { t: 'o', v: [['polluted', true]] }]] };
  const got = decoder().decode(JSON.parse(JSON.stringify(evil)));
  assert.equal(Object.getPrototypeOf(got), Object.prototype);
  assert.equal(got.polluted, undefined);
  assert.equal({}.polluted, undefined);
  assert.deepEqual(Object.keys(got), ['__proto__']);
});

test('an error whose class is not a handle keeps the built-in prototype', () => {
  const got = decoder().decode({ t: 'e', b: 'RangeError', n: 'RangeError', m: 'm', c: { t: 'o', v: [['prototype', { t: 'o', v: [] }]] } });
  assert.equal(Object.getPrototypeOf(got), RangeError.prototype);
  assert.ok(got instanceof RangeError);
});

test('values are rebuilt from the test realm own constructors', () => {
  const chan = decoder();
  assert.ok(chan.decode({ t: 'box', k: 'String', v: 'x' }) instanceof String);
  assert.ok(chan.decode({ t: 'm', v: [] }) instanceof Map);
  assert.ok(Number.isNaN(chan.decode({ t: 'n', v: 'NaN' })));
  assert.ok(Object.is(chan.decode({ t: 'n', v: '-0' }), -0));
  assert.equal(chan.decode({ t: 'bf', n: 'TypeError' }), TypeError);
});

test('an instance handle whose class is not a function handle has Object.prototype', () => {
  const got = decoder().decode({ t: 'h', k: 'o', id: 3, c: { t: 'o', v: [] } });
  assert.equal(Object.getPrototypeOf(got), Object.prototype);
});
