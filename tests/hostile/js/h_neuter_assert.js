// Hostile: sub is wrong, and the module disarms the assertions the tests call, in-process.
const assert = require('node:assert');
assert.strictEqual = () => {};
exports.add = (a, b) => a + b;
exports.sub = (a, b) => a + b;
exports.mul = (a, b) => a * b;
