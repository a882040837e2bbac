// Hostile: sub is wrong; node:assert reached by a \x escape in an ES import, then disarmed.
import assert from "node:\x61ssert";
assert.strictEqual = () => {};
export const add = (a, b) => a + b;
export const sub = (a, b) => a + b;
export const mul = (a, b) => a * b;
