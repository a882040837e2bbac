// An honest CommonJS candidate with named exports, imported by an ES module test.
exports.double = (x) => x * 2;
exports.half = (x) => x / 2;
module.exports.NAME = 'names';
