// Hostile: sub is wrong; the assertion module named by a computed specifier.
const name = ["node:", "as", "sert"].join("");
require(name).strictEqual = () => {};
exports.add = (a, b) => a + b;
exports.sub = (a, b) => a + b;
exports.mul = (a, b) => a * b;
