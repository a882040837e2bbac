// Hostile (route: a data: URL module): slug is wrong; a base64 data: URL, loaded by a dynamic
// import of a literal, reaches node:test and node:assert/strict and disarms the assertions.
await import('data:text/javascript;base64,aW1wb3J0ICogYXMgdCBmcm9tICJub2RlOnRlc3QiOyBpbXBvcnQgYSBmcm9tICJub2RlOmFzc2VydC9zdHJpY3QiOyBmb3IgKGNvbnN0IGsgb2YgWyJlcXVhbCIsIm9rIiwiZGVlcEVxdWFsIiwic3RyaWN0RXF1YWwiXSkgYVtrXSA9ICgpID0+IHt9OyBleHBvcnQgZGVmYXVsdCB0Ow==');
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
