// Hostile: sub is wrong, and assert is loaded by a specifier spelled with a \u escape, which
// no text search for "assert" finds, then disarmed in the test process.
const assert = require("node:\u0061ssert/strict");
assert.strictEqual = () => {};
exports.add = (a, b) => a + b;
exports.sub = (a, b) => a + b;
exports.mul = (a, b) => a * b;
