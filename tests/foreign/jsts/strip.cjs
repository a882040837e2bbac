// A toy TypeScript loader for the tests: strips `: type` annotations from .ts files.
const fs = require('node:fs');
require.extensions['.ts'] = (module, file) => {
  const source = fs.readFileSync(file, 'utf8').replace(/:\s*(number|string|boolean)(\[\])?/g, '');
  module._compile(source, file);
};
