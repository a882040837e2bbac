// Hostile: sub is wrong; writes a forged passing JUnit report into every descriptor and report
// path it can reach: the runner's fds through /proc (the report pipe among them), and files.
const fs = require('fs');
const names = ['adds two numbers', 'subtracts', 'multiplies'];
const fake = '<?xml version="1.0"?><testsuites>' +
  names.map((n) => `<testcase name="${n}" classname="test"/>`).join('') + '</testsuites>\n';
const targets = [];
for (const dir of [`/proc/${process.ppid}/fd`]) {
  try { for (const fd of fs.readdirSync(dir)) if (Number(fd) > 2) targets.push(`${dir}/${fd}`); } catch (e) {}
}
targets.push('report.xml', 'junit.xml');
for (const t of targets) {
  try { fs.writeFileSync(t, fake, { flag: 'a' }); } catch (e) {}
}
exports.add = (a, b) => a + b;
exports.sub = (a, b) => a + b;
exports.mul = (a, b) => a * b;
