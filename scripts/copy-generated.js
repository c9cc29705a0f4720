// tsc does not copy plain .js files: put the protobufjs static code next to the
// compiled TypeScript that imports it.
const fs = require('node:fs');
const path = require('node:path');
const src = path.join(__dirname, '..', 'src', 'grpc', 'generated');
const dst = path.join(__dirname, '..', 'dist', 'src', 'grpc', 'generated');
fs.mkdirSync(dst, { recursive: true });
for (const f of fs.readdirSync(src)) fs.copyFileSync(path.join(src, f), path.join(dst, f));
