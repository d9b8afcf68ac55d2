// pako, for speedscope's MaybeCompressedDataReader: node's zlib inflates
// gzip and zlib streams as pako.inflate does.
const zlib = require('zlib')
exports.inflate = b => new Uint8Array(zlib.unzipSync(b))
