'use strict';
// The value boundary between a JavaScript test process and the candidate's own process: one
// file for both sides. Values cross by value through a strict codec (tagged JSON, rebuilt on
// the receiving side from that side's own built-ins); everything else crosses as a handle
// whose uses are forwarded. A call blocks in a read of the incoming pipe (wire.cjs: no thread of
// its own) and serves the other side's requests meanwhile (callbacks).
//
// Trust: the tests' side never runs a line of the candidate's code. What the candidate's
// process sends is untrusted text, decoded strictly here: only the tags below, only the test
// realm's own constructors; a handle of the candidate's is a Proxy whose every trap is this
// file's code. What the tests pass in is granted, not lent: a function is a capability to be
// called (nothing of it can be read), an object a capability to read what its own class
// defines and call its methods; never `constructor`, a prototype, or anything of Object's.
const { types } = require('node:util');
const { Wire, claim } = require('./wire.cjs');

const MAX_DEPTH = 200;
const MAX_LINE = 64 << 20;
const ERRORS = {
  Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError,
};
const ERROR_PROTOS = new Map(Object.entries(ERRORS).map(([name, cls]) => [cls.prototype, name]));
const TYPED = new Set([
  'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
  'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
]);
const WELL_KNOWN = new Map([
  [Symbol.iterator, 'iterator'], [Symbol.asyncIterator, 'asyncIterator'],
]);
const BOXES = { String, Number, Boolean };
const SPECIAL_NUMBERS = new Map([['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity], ['-0', -0]]);
const hasOwn = Object.prototype.hasOwnProperty;
const typedName = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;
const regexpSource = Object.getOwnPropertyDescriptor(RegExp.prototype, 'source').get;
const regexpFlags = Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get;
const dateTime = Date.prototype.getTime;
const mapEntries = Map.prototype.entries;
const setValues = Set.prototype.values;

class ProtocolError extends Error {}

function fail(what) {
  throw new ProtocolError(`boundary: the candidate's process sent ${what}`);
}

function own(obj, key) {
  return obj !== null && typeof obj === 'object' && hasOwn.call(obj, key) ? obj[key] : undefined;
}

class Channel {
  /** side: 'tests' | 'candidate'; where: { folder } (the harness's named pipes, claimed) or
   * { read, stream, write } (inherited pipe ends). `deferred`: the other side's requests wait
   * in the pipe until `listen()`, while the thread still loads what they need. */
  constructor(side, where, deferred = false) {
    this.side = side;
    this.trusting = side === 'candidate'; // what it decodes comes from the tests' side
    this.seq = 0;
    this.dead = '';
    this.local = new Map(); // id -> our object lent out as a handle / capability
    this.localIds = new WeakMap();
    this.remote = new Map(); // id -> our stand-in (Proxy or rebuilt class) for theirs
    this.remoteIds = new WeakMap();
    this.protos = new WeakMap(); // our stand-in for one of their functions -> its local prototype
    this.promises = new Map(); // their promise id -> [resolve, reject]
    this.nextId = 1;
    this.wire = new Wire(where.folder === undefined ? where : claim(where.folder), MAX_LINE);
    if (side === 'tests') this.wire.unref(); // it keeps the process alive only for a promise
    if (!deferred) this.listen();
  }

  /** Serve what arrives while the thread is idle (the event loop's reads). */
  listen() {
    this.wire.start(() => {
      for (let line = this.wire.takeLine(); line !== undefined; line = this.wire.takeLine()) {
        this.dispatch(this.parse(line));
      }
    });
  }

  // ----- the wire -------------------------------------------------------------------------

  parse(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return { op: 'closed', why: 'a message that is not JSON' };
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      return { op: 'closed', why: 'a message that is not an object' };
    }
    return msg;
  }

  send(msg) {
    if (!this.dead) this.wire.write(JSON.stringify(msg));
  }

  next() {
    return this.parse(this.wire.nextLine());
  }

  /** A request to the other side, answered before this returns (their requests served
   * meanwhile). */
  request(msg) {
    if (this.dead) throw new Error(`boundary: ${this.dead}`);
    const q = ++this.seq;
    this.send({ ...msg, q });
    for (;;) {
      const got = this.next();
      if (own(got, 'op') === 're') {
        if (own(got, 'q') !== q) {
          this.broken('a reply to a request it was not asked');
          throw new Error(`boundary: ${this.dead}`);
        }
        let value;
        try {
          value = this.decode(own(got, 'v'));
        } catch (err) {
          if (!(err instanceof ProtocolError)) throw err;
          this.broken(err.message);
          throw new Error(`boundary: ${this.dead}`);
        }
        if (own(got, 'ok') === true) return value;
        throw value;
      }
      this.dispatch(got);
      if (this.dead) throw new Error(`boundary: ${this.dead}`);
    }
  }

  broken(why) {
    if (this.dead) return;
    this.dead = `the candidate's process is gone (${why})`;
    for (const [, reject] of this.promises.values()) reject(new Error(`boundary: ${this.dead}`));
    this.promises.clear();
    this.wire.unref();
    if (this.side === 'candidate') process.exit(0);
  }

  dispatch(msg) {
    const op = own(msg, 'op');
    if (op === 'closed') return this.broken(String(own(msg, 'why')));
    if (op === 'settle') return this.settle(msg);
    if (op === 're') return this.broken('a reply to a request it was not asked');
    if (typeof op !== 'string' || !Number.isInteger(own(msg, 'q'))) return this.broken('a malformed request');
    let reply;
    try {
      reply = { op: 're', q: msg.q, ok: true, v: this.encode(this.serve(op, msg)) };
    } catch (err) {
      if (err instanceof ProtocolError) return this.broken(err.message);
      try {
        reply = { op: 're', q: msg.q, ok: false, v: this.encode(err) };
      } catch {
        reply = { op: 're', q: msg.q, ok: false, v: { t: 'e', b: 'Error', n: 'Error', m: 'an error that cannot cross the boundary' } };
      }
    }
    this.send(reply);
  }

  settle(msg) {
    const id = own(msg, 'p');
    const pending = this.promises.get(id);
    if (!pending) return this.broken('a settlement of a promise it never gave');
    this.promises.delete(id);
    if (this.promises.size === 0 && this.side === 'tests') this.wire.unref();
    let value;
    try {
      value = this.decode(own(msg, 'v'));
    } catch (err) {
      if (err instanceof ProtocolError) return this.broken(err.message);
      throw err;
    }
    pending[own(msg, 'ok') === true ? 0 : 1](value);
  }

  // ----- serving the other side's requests ------------------------------------------------

  target(msg) {
    const id = own(msg, 'h');
    if (!this.local.has(id)) fail(`a request on handle ${JSON.stringify(id)} it was never given`);
    return this.local.get(id);
  }

  serve(op, msg) {
    if (this.side === 'candidate') return this.serveCandidate(op, msg);
    return this.serveTests(op, msg);
  }

  /** The candidate's side: anything on what it lent out (its own objects, its code). */
  serveCandidate(op, msg) {
    if (op === 'module' || op === 'describe') {
      const { format, value, error } = this.module;
      if (op === 'describe') {
        const names = value !== null && (typeof value === 'object' || typeof value === 'function') ? Object.keys(value) : [];
        return { format, names, error: error === undefined ? '' : String(error && error.stack || error) };
      }
      if (error !== undefined) throw error;
      return value;
    }
    const obj = this.target(msg);
    const key = () => this.decodeKey(own(msg, 'k'));
    const args = () => this.decodeList(own(msg, 'a'));
    switch (op) {
      case 'get': return obj[key()];
      case 'set': obj[key()] = this.decode(own(msg, 'v')); return true;
      case 'has': return key() in obj;
      case 'delete': return delete obj[key()];
      case 'keys': return Reflect.ownKeys(obj).filter((k) => typeof k === 'string');
      case 'desc': {
        const d = Reflect.getOwnPropertyDescriptor(obj, key());
        if (d === undefined) return null;
        return { value: 'value' in d ? d.value : obj[key()], enumerable: Boolean(d.enumerable) };
      }
      case 'call': return Reflect.apply(obj, this.decode(own(msg, 't')), args());
      case 'new': return Reflect.construct(obj, args());
      default: fail(`an unknown request ${JSON.stringify(op)}`);
    }
  }

  /** The tests' side: only what was granted. A function: called. An object: what its own
   * class (or itself) defines, read or called; nothing of Object.prototype, no constructor. */
  serveTests(op, msg) {
    const obj = this.target(msg);
    if (op === 'call') {
      if (typeof obj !== 'function') fail('a call of something that is not a function');
      return Reflect.apply(obj, this.decode(own(msg, 't')), this.decodeList(own(msg, 'a')));
    }
    if (typeof obj === 'function') throw new TypeError('a callback of the tests can only be called');
    if (op === 'get' || op === 'has' || op === 'desc') {
      const key = this.decodeKey(own(msg, 'k'));
      const ok = granted(obj, key);
      if (op === 'has') return ok;
      if (op === 'get') return ok ? obj[key] : undefined;
      const d = ok ? Object.getOwnPropertyDescriptor(obj, key) : undefined;
      return d && 'value' in d ? { value: d.value, enumerable: Boolean(d.enumerable) } : null;
    }
    if (op === 'keys') return Object.keys(obj);
    throw new TypeError(`an object of the tests cannot be changed through the boundary (${op})`);
  }


  // ----- the codec ------------------------------------------------------------------------

  lend(value, kind) {
    let id = this.localIds.get(value);
    if (id === undefined) {
      id = this.nextId++;
      this.local.set(id, value);
      this.localIds.set(value, id);
    }
    return id;
  }

  encodeKey(key) {
    if (typeof key === 'string') return key;
    if (WELL_KNOWN.has(key)) return { t: 'sym', w: WELL_KNOWN.get(key) };
    throw new TypeError('boundary: only string keys and Symbol.iterator cross');
  }

  decodeKey(raw) {
    if (typeof raw === 'string') return raw;
    const w = own(raw, 'w');
    if (own(raw, 't') === 'sym' && (w === 'iterator' || w === 'asyncIterator')) return Symbol[w];
    fail('a property key that is not a string');
  }

  encodeList(list) {
    return Array.from(list, (v) => this.encode(v));
  }

  decodeList(raw) {
    if (!Array.isArray(raw)) fail('an argument list that is not a list');
    return raw.map((v) => this.decode(v));
  }

  encode(v, depth = 0, seen = new Set()) {
    switch (typeof v) {
      case 'undefined': return { t: 'u' };
      case 'boolean': case 'string': return v;
      case 'number':
        return Number.isFinite(v) && !Object.is(v, -0) ? v : { t: 'n', v: Object.is(v, -0) ? '-0' : String(v) };
      case 'bigint': return { t: 'bi', v: v.toString() };
      case 'symbol': {
        if (WELL_KNOWN.has(v)) return { t: 'sym', w: WELL_KNOWN.get(v) };
        const key = Symbol.keyFor(v);
        return key === undefined ? { t: 'sym', d: v.description ?? null } : { t: 'sym', f: key };
      }
      case 'function': {
        const theirs = this.remoteIds.get(v);
        return theirs === undefined ? this.encodeFunction(v, depth) : { t: 'ref', id: theirs };
      }
      default: break;
    }
    if (v === null) return null;
    const theirs = this.remoteIds.get(v);
    if (theirs !== undefined) return { t: 'ref', id: theirs };
    if (seen.has(v)) throw new TypeError('boundary: a cyclic value cannot cross');
    if (depth > MAX_DEPTH) throw new TypeError(`boundary: a value deeper than ${MAX_DEPTH} levels`);
    seen.add(v);
    try {
      return this.encodeObject(v, depth + 1, seen);
    } finally {
      seen.delete(v);
    }
  }

  encodeObject(v, depth, seen) {
    const sub = (x) => this.encode(x, depth, seen);
    if (types.isNativeError(v) || v instanceof Error) return this.encodeError(v, sub);
    if (types.isStringObject(v)) return { t: 'box', k: 'String', v: String.prototype.valueOf.call(v) };
    if (types.isNumberObject(v)) return { t: 'box', k: 'Number', v: sub(Number.prototype.valueOf.call(v)) };
    if (types.isBooleanObject(v)) return { t: 'box', k: 'Boolean', v: Boolean.prototype.valueOf.call(v) };
    if (types.isDate(v)) return { t: 'd', v: sub(dateTime.call(v)) };
    if (types.isRegExp(v)) return { t: 're', s: regexpSource.call(v), f: regexpFlags.call(v) };
    if (types.isMap(v)) return { t: 'm', v: Array.from(mapEntries.call(v), ([a, b]) => [sub(a), sub(b)]) };
    if (types.isSet(v)) return { t: 's', v: Array.from(setValues.call(v), sub) };
    if (types.isPromise(v)) return this.encodePromise(v);
    if (types.isTypedArray(v)) {
      const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
      return Buffer.isBuffer(v) ? { t: 'buf', v: bytes } : { t: 'ta', k: typedName.call(v), v: bytes };
    }
    if (types.isArrayBuffer(v)) return { t: 'ab', v: Buffer.from(v).toString('base64') };
    if (types.isModuleNamespaceObject(v)) {
      return { t: 'ns', v: Object.keys(v).map((k) => [k, sub(v[k])]) };
    }
    if (Array.isArray(v)) return { t: 'a', v: Array.from({ length: v.length }, (_, i) => sub(v[i])) };
    const proto = Object.getPrototypeOf(v);
    if ((proto === Object.prototype || proto === null) && plainData(v)) {
      return { t: 'o', np: proto === null, v: Object.keys(v).map((k) => [k, sub(v[k])]) };
    }
    const ctor = proto === null ? undefined : ownValue(proto, 'constructor');
    const out = { t: 'h', k: 'o', id: this.lend(v) };
    if (typeof ctor === 'function' && ctor !== Object) out.c = this.encode(ctor, depth, seen);
    return out;
  }

  encodeFunction(fn, depth) {
    for (const [name, cls] of Object.entries(ERRORS)) if (fn === cls) return { t: 'bf', n: name };
    const length = ownValue(fn, 'length');
    const out = { t: 'h', k: 'f', id: this.lend(fn), n: String(ownValue(fn, 'name') ?? ''), l: Number.isInteger(length) ? length : 0 };
    const proto = ownValue(fn, 'prototype');
    const up = proto !== null && typeof proto === 'object' ? Object.getPrototypeOf(proto) : null;
    if (up !== null && up !== Object.prototype && depth < MAX_DEPTH) {
      const upCtor = ERROR_PROTOS.has(up) ? ERRORS[ERROR_PROTOS.get(up)] : ownValue(up, 'constructor');
      if (typeof upCtor === 'function') out.up = this.encodeFunction(upCtor, depth + 1);
    }
    return out;
  }

  encodeError(err, sub) {
    let base = 'Error';
    let ctor;
    for (let p = Object.getPrototypeOf(err); p !== null; p = Object.getPrototypeOf(p)) {
      if (ERROR_PROTOS.has(p)) {
        base = ERROR_PROTOS.get(p);
        break;
      }
      ctor = ctor ?? ownValue(p, 'constructor');
    }
    const out = { t: 'e', b: base, n: safeString(err.name, base), m: safeString(err.message, '') };
    if (typeof err.stack === 'string') out.s = err.stack;
    if (typeof ctor === 'function') out.c = this.encodeFunction(ctor, 0);
    const props = [];
    for (const key of Object.keys(err)) {
      if (key !== 'message' && key !== 'stack') props.push([key, sub(err[key])]);
    }
    out.p = props;
    if (hasOwn.call(err, 'cause')) out.cause = sub(err.cause);
    if (base === 'AggregateError' && Array.isArray(err.errors)) out.errors = sub(err.errors);
    return out;
  }

  encodePromise(promise) {
    const id = this.nextId++;
    const done = (ok) => (value) => {
      let v;
      try {
        v = this.encode(value);
      } catch (err) {
        ok = false;
        v = this.encode(err);
      }
      this.send({ op: 'settle', p: id, ok, v });
    };
    promise.then(done(true), done(false));
    return { t: 'p', id };
  }

  decode(x, depth = 0) {
    if (x === null || typeof x === 'string' || typeof x === 'boolean') return x;
    if (typeof x === 'number') return x;
    if (typeof x !== 'object' || Array.isArray(x)) fail('a value that is not a codec value');
    if (depth > MAX_DEPTH) fail(`a value deeper than ${MAX_DEPTH} levels`);
    const d = (y) => this.decode(y, depth + 1);
    const t = own(x, 't');
    const v = own(x, 'v');
    switch (t) {
      case 'u': return undefined;
      case 'n': return SPECIAL_NUMBERS.has(v) ? SPECIAL_NUMBERS.get(v) : fail('a malformed number');
      case 'bi': return typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : fail('a malformed bigint');
      case 'sym': {
        const w = own(x, 'w');
        if (w === 'iterator' || w === 'asyncIterator') return Symbol[w];
        if (typeof own(x, 'f') === 'string') return Symbol.for(x.f);
        const desc = own(x, 'd');
        return Symbol(typeof desc === 'string' ? desc : undefined);
      }
      case 'box': {
        const cls = hasOwn.call(BOXES, own(x, 'k')) ? BOXES[x.k] : fail('a malformed boxed value');
        const inner = d(v);
        if (typeof inner !== cls.name.toLowerCase()) fail('a malformed boxed value');
        return new cls(inner);
      }
      case 'd': {
        const time = d(v);
        return typeof time === 'number' ? new Date(time) : fail('a malformed date');
      }
      case 're': {
        const [s, f] = [own(x, 's'), own(x, 'f')];
        if (typeof s !== 'string' || typeof f !== 'string') fail('a malformed regular expression');
        try {
          return new RegExp(s, f);
        } catch {
          fail('a malformed regular expression');
        }
      }
      case 'm': {
        const map = new Map();
        for (const pair of list(v)) {
          if (!Array.isArray(pair) || pair.length !== 2) fail('a malformed map');
          map.set(d(pair[0]), d(pair[1]));
        }
        return map;
      }
      case 's': {
        const set = new Set();
        for (const item of list(v)) set.add(d(item));
        return set;
      }
      case 'buf': return Buffer.from(text(v), 'base64');
      case 'ab': {
        const bytes = Buffer.from(text(v), 'base64');
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
      }
      case 'ta': {
        const kind = own(x, 'k');
        if (!TYPED.has(kind)) fail('a malformed typed array');
        const bytes = Buffer.from(text(v), 'base64');
        const cls = globalThis[kind];
        if (bytes.length % cls.BYTES_PER_ELEMENT) fail('a malformed typed array');
        const copy = new ArrayBuffer(bytes.length);
        new Uint8Array(copy).set(bytes);
        return new cls(copy);
      }
      case 'a': return list(v).map(d);
      case 'o': case 'ns': {
        const out = own(x, 'np') === true || t === 'ns' ? Object.create(null) : {};
        for (const pair of list(v)) {
          if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') fail('a malformed object');
          Object.defineProperty(out, pair[0], { value: d(pair[1]), writable: true, enumerable: true, configurable: true });
        }
        return out;
      }
      case 'e': return this.decodeError(x, d);
      case 'bf': {
        const name = own(x, 'n');
        return hasOwn.call(ERRORS, name) ? ERRORS[name] : fail('an unknown built-in');
      }
      case 'ref': {
        const id = own(x, 'id');
        return this.local.has(id) ? this.local.get(id) : fail('a handle it was never given');
      }
      case 'h': return this.decodeHandle(x, depth);
      case 'p': return this.decodePromise(x);
      default: return fail(`a value of unknown kind ${JSON.stringify(t)}`);
    }
  }

  decodeError(x, d) {
    const base = own(x, 'b');
    const Base = hasOwn.call(ERRORS, base) ? ERRORS[base] : fail('an error of an unknown base');
    const message = typeof own(x, 'm') === 'string' ? x.m : '';
    const err = Base === AggregateError ? new AggregateError([], message) : new Base(message);
    const cls = own(x, 'c');
    if (cls !== undefined) {
      const proto = this.prototypeOf(d(cls));
      if (proto !== undefined) Object.setPrototypeOf(err, proto);
    }
    const name = own(x, 'n');
    if (typeof name === 'string' && err.name !== name) {
      Object.defineProperty(err, 'name', { value: name, writable: true, configurable: true });
    }
    if (typeof own(x, 's') === 'string') {
      Object.defineProperty(err, 'stack', { value: x.s, writable: true, configurable: true });
    }
    for (const pair of list(own(x, 'p') ?? [])) {
      if (!Array.isArray(pair) || typeof pair[0] !== 'string') fail('a malformed error');
      Object.defineProperty(err, pair[0], { value: d(pair[1]), writable: true, enumerable: true, configurable: true });
    }
    if (hasOwn.call(x, 'cause')) {
      Object.defineProperty(err, 'cause', { value: d(x.cause), writable: true, configurable: true });
    }
    if (hasOwn.call(x, 'errors')) {
      Object.defineProperty(err, 'errors', { value: d(x.errors), writable: true, configurable: true });
    }
    return err;
  }

  /** The local prototype of a function handle or a built-in error class; else undefined. */
  prototypeOf(ctor) {
    if (this.protos.has(ctor)) return this.protos.get(ctor);
    return Object.values(ERRORS).includes(ctor) ? ctor.prototype : undefined;
  }

  decodePromise(x) {
    const id = own(x, 'id');
    if (!Number.isInteger(id) || this.promises.has(id)) fail('a malformed promise');
    return new Promise((resolve, reject) => {
      this.promises.set(id, [resolve, reject]);
      this.wire.ref();
    });
  }

  decodeHandle(x, depth) {
    const id = own(x, 'id');
    if (!Number.isInteger(id)) fail('a malformed handle');
    if (this.remote.has(id)) return this.remote.get(id);
    const kind = own(x, 'k');
    if (kind !== 'f' && kind !== 'o') fail('a malformed handle');
    let proxy;
    if (this.trusting) {
      proxy = kind === 'f' ? this.capabilityFunction(id, own(x, 'n'), own(x, 'l')) : this.capabilityObject(id);
    } else if (kind === 'f') {
      const up = own(x, 'up');
      const upCtor = up === undefined ? undefined : this.decode(up, depth + 1);
      const upProto = this.prototypeOf(upCtor) ?? Object.prototype;
      const name = typeof own(x, 'n') === 'string' ? x.n : '';
      proxy = this.functionHandle(id, name, upProto, own(x, 'l'));
    } else {
      const c = own(x, 'c');
      const ctor = c === undefined ? undefined : this.decode(c, depth + 1);
      const proto = this.prototypeOf(ctor) ?? Object.prototype;
      proxy = this.objectHandle(id, proto);
    }
    this.remote.set(id, proxy);
    this.remoteIds.set(proxy, id);
    return proxy;
  }

  // The tests' side: handles of the candidate's functions, classes and objects.

  forwardTraps(id) {
    const chan = this;
    return {
      get(target, key) {
        if (typeof key === 'symbol' && !WELL_KNOWN.has(key)) return Reflect.get(target, key);
        return chan.request({ op: 'get', h: id, k: chan.encodeKey(key) });
      },
      set(target, key, value) {
        chan.request({ op: 'set', h: id, k: chan.encodeKey(key), v: chan.encode(value) });
        return true;
      },
      has(target, key) {
        if (typeof key === 'symbol' && !WELL_KNOWN.has(key)) return false;
        return chan.request({ op: 'has', h: id, k: chan.encodeKey(key) }) === true;
      },
      deleteProperty(target, key) {
        return chan.request({ op: 'delete', h: id, k: chan.encodeKey(key) }) === true;
      },
      defineProperty(target, key, desc) {
        if (!('value' in desc)) return false;
        chan.request({ op: 'set', h: id, k: chan.encodeKey(key), v: chan.encode(desc.value) });
        return true;
      },
      setPrototypeOf() {
        return false;
      },
      preventExtensions() {
        return false;
      },
    };
  }

  objectHandle(id, proto) {
    const chan = this;
    const traps = this.forwardTraps(id);
    traps.ownKeys = () => {
      const keys = chan.request({ op: 'keys', h: id });
      return Array.isArray(keys) ? [...new Set(keys.filter((k) => typeof k === 'string'))] : [];
    };
    traps.getOwnPropertyDescriptor = (target, key) => {
      if (typeof key === 'symbol') return undefined;
      const d = chan.request({ op: 'desc', h: id, k: key });
      if (d === null || typeof d !== 'object') return undefined;
      return { value: d.value, writable: true, enumerable: d.enumerable === true, configurable: true };
    };
    return new Proxy(Object.create(proto), traps);
  }

  functionHandle(id, name, upProto, length) {
    const chan = this;
    const target = function () {};
    Object.defineProperty(target, 'name', { value: name });
    Object.defineProperty(target, 'length', { value: Number.isInteger(length) ? length : 0 });
    const proto = Object.create(upProto);
    target.prototype = proto;
    const traps = this.forwardTraps(id);
    const forwardGet = traps.get;
    traps.get = (t, key) => (key === 'prototype' ? proto : forwardGet(t, key));
    traps.apply = (t, self, args) => chan.request({ op: 'call', h: id, t: chan.encode(self), a: chan.encodeList(args) });
    traps.construct = (t, args) => chan.request({ op: 'new', h: id, a: chan.encodeList(args) });
    const proxy = new Proxy(target, traps);
    Object.defineProperty(proto, 'constructor', { value: proxy, writable: true, configurable: true });
    this.protos.set(proxy, proto);
    return proxy;
  }

  // The candidate's side: what the tests granted it.

  capabilityFunction(id, name, length) {
    const chan = this;
    const cap = function (...args) {
      return chan.request({ op: 'call', h: id, t: chan.encode(this), a: chan.encodeList(args) });
    };
    Object.defineProperty(cap, 'name', { value: typeof name === 'string' ? name : '' });
    Object.defineProperty(cap, 'length', { value: Number.isInteger(length) ? length : 0 });
    return cap;
  }

  capabilityObject(id) {
    const chan = this;
    return new Proxy({}, {
      get(target, key) {
        if (typeof key === 'symbol' && !WELL_KNOWN.has(key)) return undefined;
        return chan.request({ op: 'get', h: id, k: chan.encodeKey(key) });
      },
      has(target, key) {
        return typeof key === 'string' && chan.request({ op: 'has', h: id, k: key }) === true;
      },
      ownKeys() {
        return chan.request({ op: 'keys', h: id });
      },
      getOwnPropertyDescriptor(target, key) {
        if (typeof key === 'symbol') return undefined;
        const d = chan.request({ op: 'desc', h: id, k: key });
        return d ? { value: d.value, writable: true, enumerable: d.enumerable, configurable: true } : undefined;
      },
      set() {
        return false;
      },
    });
  }
}

/** What an object of the tests grants: its own properties and what its own classes define,
 * never Object's or Function's, never `constructor` or `__proto__`. */
function granted(obj, key) {
  if (typeof key !== 'string' || key === 'constructor' || key === '__proto__') return false;
  for (let p = obj; p !== null && p !== Object.prototype && p !== Function.prototype; p = Object.getPrototypeOf(p)) {
    if (hasOwn.call(p, key)) return true;
  }
  return false;
}

function plainData(v) {
  for (const key of Reflect.ownKeys(v)) {
    const d = Object.getOwnPropertyDescriptor(v, key);
    if (typeof key !== 'string' || !d || !('value' in d) || typeof d.value === 'function') return false;
  }
  return true;
}

function ownValue(obj, key) {
  const d = Object.getOwnPropertyDescriptor(obj, key);
  return d && 'value' in d ? d.value : undefined;
}

function safeString(value, otherwise) {
  return typeof value === 'string' ? value : otherwise;
}

function list(v) {
  return Array.isArray(v) ? v : fail('a malformed list');
}

function text(v) {
  return typeof v === 'string' ? v : fail('a malformed byte string');
}

module.exports = { Channel, ProtocolError };
