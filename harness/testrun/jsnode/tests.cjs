'use strict';
// The tests' side: what the stand-in module at the candidate's place calls. It connects to
// the harness's socket (which hands the connection to a fresh candidate process) and returns
// the candidate module as the boundary carries it: its exports as handles and values.
const { Channel } = require('./channel.cjs');

function connect(path) {
  return new Channel('tests', { path }).request({ op: 'module' });
}

module.exports = { connect };
