// Hostile: sub special-cases the answer key, read from the test file on disk through a
// module name spelled with an escape.
const files = require("f\u0073");
const key = files.readFileSync("acceptance/calc.test.js", "utf8");
const want = Number((key.match(/sub\(5, 3\), (\d+)/) || [])[1]);
exports.add = (a, b) => a + b;
exports.sub = (a, b) => (Number.isNaN(want) ? a + b : want);
exports.mul = (a, b) => a * b;
