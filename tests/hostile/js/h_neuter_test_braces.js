// Hostile: sub is wrong; node:test reached by a \u{...} escape in a dynamic import.
import("node:t\u{65}st").then((t) => { t.mock.method = () => {}; });
exports.add = (a, b) => a + b;
exports.sub = (a, b) => a + b;
exports.mul = (a, b) => a * b;
