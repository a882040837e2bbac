'use strict';
// The tests' side: what the stand-in module at the candidate's place calls. It claims a pair
// of the harness's named pipes in `folder` (the harness joins it to a warm candidate process)
// and returns the candidate module as the boundary carries it: its exports as handles and
// values.
const { Channel } = require('./channel.cjs');

function connect(folder) {
  return new Channel('tests', { folder }).request({ op: 'module' });
}

module.exports = { connect };
