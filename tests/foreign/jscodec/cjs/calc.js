// An honest CommonJS candidate: a function module with properties, as many npm packages are.
function calc(a, b) { return a + b; }
calc.sub = (a, b) => a - b;
calc.stats = (xs) => ({ min: Math.min(...xs), max: Math.max(...xs), count: xs.length });
calc.Acc = class Acc {
  constructor() { this.total = 0; }
  add(x) { this.total += x; return this; }
};
calc.check = (x) => { if (typeof x !== 'number') throw new TypeError(`not a number: ${x}`); return x; };
module.exports = calc;
