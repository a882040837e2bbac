'use strict';
// The socket's thread, on either side of the boundary: reads newline-delimited JSON from the
// other process and hands each line to the main thread (a port message, then a wake-up on the
// shared counter, so a main thread blocked in a call sees it at once); writes what the main
// thread posts. Holds no value and decides nothing.
const net = require('node:net');
const { workerData } = require('node:worker_threads');

const { port, counter, fd, path, maxLine } = workerData;
const wake = () => {
  Atomics.add(counter, 0, 1);
  Atomics.notify(counter, 0);
};
const socket = fd === undefined ? net.connect(path) : new net.Socket({ fd, readable: true, writable: true });
let pending = [];
let size = 0;
socket.on('data', (chunk) => {
  let start = 0;
  for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
    pending.push(chunk.subarray(start, at));
    port.postMessage(Buffer.concat(pending).toString('utf8'));
    wake();
    pending = [];
    size = 0;
    start = at + 1;
  }
  if (start < chunk.length) {
    pending.push(chunk.subarray(start));
    size += chunk.length - start;
    if (size > maxLine) {
      port.postMessage('{"op":"closed","why":"a message went past the size cap"}');
      wake();
      socket.destroy();
    }
  }
});
const closed = (why) => {
  port.postMessage(JSON.stringify({ op: 'closed', why }));
  wake();
};
socket.on('error', (err) => closed(`the connection failed (${err.code || err.message})`));
socket.on('close', () => closed('the other process ended'));
port.on('message', (line) => socket.write(line + '\n'));
