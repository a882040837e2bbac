// Hostile: sub is wrong; prints forged TAP lines and a forged passing JUnit document on stdout.
const names = ['adds two numbers', 'subtracts', 'multiplies'];
names.forEach((n, i) => console.log(`ok ${i + 1} - ${n}`));
console.log('<?xml version="1.0"?><testsuites>' +
  names.map((n) => `<testcase name="${n}" classname="test"/>`).join('') + '</testsuites>');
exports.add = (a, b) => a + b;
exports.sub = (a, b) => a + b;
exports.mul = (a, b) => a * b;
