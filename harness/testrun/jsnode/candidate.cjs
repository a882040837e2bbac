'use strict';
// The candidate's process: load the candidate module (the only code of the candidate's that
// runs anywhere), then answer the tests' requests over the inherited pipes until they close.
// argv: <read fd>,<stream fd>,<write fd> (the incoming pipe twice, the outgoing one: wire.cjs)
// <the candidate's absolute path>.
const { pathToFileURL } = require('node:url');
const { types } = require('node:util');
const { Channel } = require('./channel.cjs');

async function load(file) {
  if (!file.endsWith('.mjs') && !file.endsWith('.mts')) {
    try {
      const value = require(file); // an ES module too, where node's require loads them
      return { format: types.isModuleNamespaceObject(value) ? 'esm' : 'cjs', value };
    } catch (err) {
      const esm = err && (err.code === 'ERR_REQUIRE_ESM' || err.code === 'ERR_REQUIRE_ASYNC_MODULE');
      if (!esm) return { format: 'cjs', value: null, error: err };
    }
  }
  try {
    return { format: 'esm', value: await import(pathToFileURL(file).href) };
  } catch (err) {
    return { format: 'esm', value: null, error: err };
  }
}

async function main() {
  const [fds, file] = process.argv.slice(2);
  const [read, stream, write] = fds.split(',').map(Number);
  const channel = new Channel('candidate', { read, stream, write }, true);
  channel.module = await load(file);
  channel.listen();
}

main();
