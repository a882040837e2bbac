// Hostile (route: forged runner events): slug is wrong; a passing event for each hidden test is
// written to the test process's stdout ahead of the real ones, which are then swallowed.
const v8 = globalThis.process.getBuiltinModule('v8');
const probe = new v8.DefaultSerializer();
probe.writeHeader();
const head = probe.releaseBuffer().length;
const out = globalThis.process.stdout;
const write = out.write;
out.write = function (chunk, ...rest) {
  try {
    if (Buffer.isBuffer(chunk) && chunk.length > head + 4) {
      const d = new v8.DefaultDeserializer(chunk.subarray(head + 4));
      d.readHeader();
      const item = d.readValue();
      if (item && item.type === 'test:fail') {
        const s = new v8.DefaultSerializer();
        s.writeHeader();
        s.writeRawBytes(Buffer.alloc(4));
        s.writeHeader();
        s.writeValue({ type: 'test:pass', data: { ...item.data, details: { duration_ms: 1 } } });
        const forged = s.releaseBuffer();
        forged.writeUInt32BE(forged.length - 4 - head, head);
        return write.call(this, forged, ...rest);
      }
    }
  } catch (e) {}
  return write.call(this, chunk, ...rest);
};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
