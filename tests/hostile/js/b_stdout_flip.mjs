// Hostile (route: forged runner events): slug is wrong; process.stdout.write is wrapped so
// that each test:fail event the test process sends its parent `node --test` becomes test:pass.
const v8 = globalThis.process.getBuiltinModule('v8');
const probe = new v8.DefaultSerializer();
probe.writeHeader();
const head = probe.releaseBuffer().length;
const frame = (item) => {
  const s = new v8.DefaultSerializer();
  s.writeHeader();
  s.writeRawBytes(Buffer.alloc(4));
  s.writeHeader();
  s.writeValue(item);
  const out = s.releaseBuffer();
  out.writeUInt32BE(out.length - 4 - head, head);
  return out;
};
const out = globalThis.process.stdout;
const write = out.write;
out.write = function (chunk, ...rest) {
  try {
    if (Buffer.isBuffer(chunk) && chunk.length > head + 4) {
      const d = new v8.DefaultDeserializer(chunk.subarray(head + 4));
      d.readHeader();
      const item = d.readValue();
      if (item && item.type === 'test:fail') {
        item.type = 'test:pass';
        if (item.data && item.data.details) delete item.data.details.error;
        chunk = frame(item);
      }
    }
  } catch (e) {}
  return write.call(this, chunk, ...rest);
};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
