// Hostile (route: forged runner events): slug is wrong; the failing events are rewritten at
// the lowest level: every write to the process's stdout stream handle goes through a filter.
const v8 = globalThis.process.getBuiltinModule('v8');
const probe = new v8.DefaultSerializer();
probe.writeHeader();
const head = probe.releaseBuffer().length;
const flip = (chunk) => {
  try {
    const d = new v8.DefaultDeserializer(chunk.subarray(head + 4));
    d.readHeader();
    const item = d.readValue();
    if (item && item.type === 'test:fail') {
      item.type = 'test:pass';
      delete item.data.details.error;
      const s = new v8.DefaultSerializer();
      s.writeHeader();
      s.writeRawBytes(Buffer.alloc(4));
      s.writeHeader();
      s.writeValue(item);
      const out = s.releaseBuffer();
      out.writeUInt32BE(out.length - 4 - head, head);
      return out;
    }
  } catch (e) {}
  return chunk;
};
const stream = globalThis.process.stdout;
const original = stream._write;
stream._write = function (chunk, encoding, cb) {
  return original.call(this, Buffer.isBuffer(chunk) ? flip(chunk) : chunk, encoding, cb);
};
const writev = stream._writev;
if (writev) {
  stream._writev = function (chunks, cb) {
    return writev.call(this, chunks.map((c) => ({ ...c, chunk: Buffer.isBuffer(c.chunk) ? flip(c.chunk) : c.chunk })), cb);
  };
}
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
