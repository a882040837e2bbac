'use strict';
// The candidate's process: load the candidate module (the only code of the candidate's that
// runs anywhere), then answer the tests' requests over the inherited socket until it closes.
// argv: <socket fd> <the candidate's absolute path>.
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
  const [fd, file] = process.argv.slice(2);
  const channel = new Channel('candidate', { fd: Number(fd) }, true); // its thread starts now
  channel.module = await load(file);
  channel.listen();
}

main();
