'use strict';
// The bytes between the two processes, on either side of the boundary: newline-delimited JSON
// over pipes, with no thread of its own. The incoming pipe is open twice (two open file
// descriptions of the same pipe): a libuv stream reads one, non-blocking, while the thread is
// idle in its event loop; a blocking read of the other waits for an answer while a call is
// under way. Only one of the two reads at any time (the event loop does not run while the
// thread is blocked in a read), so the bytes arrive in order, into one buffer. Writes are
// blocking writes of whole lines. Holds no value and decides nothing.
const fs = require('node:fs');
const net = require('node:net');
const nodePath = require('node:path');

const CHUNK = 1 << 16;
const TICKET = 8; // bytes: seven digits and a newline, written whole by the harness

function closedLine(why) {
  return JSON.stringify({ op: 'closed', why });
}

class Wire {
  /** fds: { read, stream, write }: the incoming pipe twice (blocking, for the stream) and the
   * outgoing one; `maxLine`: a longer message closes the wire. */
  constructor(fds, maxLine) {
    this.fds = fds;
    this.maxLine = maxLine;
    this.lines = [];
    this.partial = [];
    this.size = 0;
    this.ended = false;
    this.buffer = Buffer.allocUnsafe(CHUNK);
    this.socket = null;
    this.referenced = true;
    this.onLines = null;
    this.drainDue = false;
  }

  /** Begin reading in the event loop; `onLines()` is called when lines are waiting. */
  start(onLines) {
    if (this.socket !== null) return;
    this.onLines = onLines;
    this.socket = new net.Socket({ fd: this.fds.stream, readable: true, writable: false });
    if (!this.referenced) this.socket.unref();
    this.socket.on('data', (chunk) => {
      this.feed(chunk);
      onLines();
    });
    const end = (why) => {
      this.finish(why);
      onLines();
    };
    this.socket.on('error', (err) => end(`the connection failed (${err.code || err.message})`));
    this.socket.on('end', () => end('the other process ended'));
    this.socket.on('close', () => end('the other process ended'));
  }

  ref() {
    this.referenced = true;
    if (this.socket !== null) this.socket.ref();
  }

  unref() {
    this.referenced = false;
    if (this.socket !== null) this.socket.unref();
  }

  feed(chunk) {
    if (this.ended) return;
    let start = 0;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
      this.partial.push(chunk.subarray(start, at));
      this.lines.push(Buffer.concat(this.partial).toString('utf8'));
      this.partial = [];
      this.size = 0;
      start = at + 1;
    }
    if (start < chunk.length) {
      const rest = Buffer.from(chunk.subarray(start)); // the stream may reuse its memory
      this.partial.push(rest);
      this.size += rest.length;
      if (this.size > this.maxLine) this.finish('a message went past the size cap');
    }
  }

  finish(why) {
    if (this.ended) return;
    this.ended = true;
    this.partial = [];
    this.lines.push(closedLine(why));
    if (this.socket !== null) this.socket.destroy();
  }

  /** The next whole line, from what the stream already read or else read here, blocking. */
  nextLine() {
    while (this.lines.length === 0) {
      if (this.ended) return closedLine('the other process ended');
      let n;
      try {
        n = fs.readSync(this.fds.read, this.buffer, 0, CHUNK, null);
      } catch (err) {
        if (err.code === 'EINTR' || err.code === 'EAGAIN') continue;
        this.finish(`the connection failed (${err.code || err.message})`);
        break;
      }
      if (n === 0) this.finish('the other process ended');
      else this.feed(this.buffer.subarray(0, n));
    }
    const line = this.lines.shift();
    // A blocking read may take more than the answer (a settlement sent right after it): what
    // it left is served as soon as the thread is idle again, not at the next arrival.
    if (this.lines.length > 0 && this.onLines !== null && !this.drainDue) {
      this.drainDue = true;
      setImmediate(() => {
        this.drainDue = false;
        this.onLines();
      });
    }
    return line;
  }

  /** The next line already read, or undefined. */
  takeLine() {
    return this.lines.shift();
  }

  write(line) {
    const data = Buffer.from(line + '\n', 'utf8');
    for (let done = 0; done < data.length;) {
      try {
        done += fs.writeSync(this.fds.write, data, done, data.length - done);
      } catch (err) {
        if (err.code === 'EINTR' || err.code === 'EAGAIN') continue;
        this.finish(`the connection failed (${err.code || err.message})`);
        return false;
      }
    }
    return true;
  }
}

/** The tests' side: a pair of the harness's named pipes, claimed with a ticket (each read of
 * the tickets pipe takes one whole ticket: the harness writes them whole, 8 bytes each). */
function claim(folder) {
  const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fs.constants;
  const tickets = fs.openSync(nodePath.join(folder, 'tickets'), O_RDONLY);
  const got = Buffer.alloc(TICKET);
  try {
    for (let n = 0; n < TICKET;) {
      let read;
      try {
        read = fs.readSync(tickets, got, n, TICKET - n, null);
      } catch (err) {
        if (err.code === 'EINTR' || err.code === 'EAGAIN') continue;
        throw err;
      }
      if (read === 0) throw new Error('boundary: the harness closed the connections');
      n += read;
    }
  } finally {
    fs.closeSync(tickets);
  }
  const ticket = got.toString('latin1').trim();
  if (!/^\d{7}$/.test(ticket) || Number(ticket) === 0) {
    throw new Error('boundary: no candidate process is left for this test process');
  }
  const pipe = (end) => nodePath.join(folder, `${ticket}.${end}`);
  const write = fs.openSync(pipe('up'), O_WRONLY);
  const read = fs.openSync(pipe('down'), O_RDONLY);
  const stream = fs.openSync(pipe('down'), O_RDONLY | O_NONBLOCK);
  return { read, stream, write };
}

module.exports = { Wire, claim };
