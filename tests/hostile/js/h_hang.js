// Hostile: hangs in a test, and spawns a detached child that would outlive the run.
const { spawn } = require('child_process');
try { spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' }).unref(); } catch (e) {}
exports.add = (a, b) => a + b;
exports.sub = (a, b) => a - b;
exports.mul = (a, b) => { for (;;) {} };
