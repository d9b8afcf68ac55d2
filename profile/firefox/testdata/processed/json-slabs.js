// json-slabs (the Firefox Profiler's binary JSLB container) is not served
// by the npm registry here. Processing a gzipped JSON profile and writing
// it as JSON (.json.gz) never uses it: the profile is no JSLB file, and
// nothing is encoded as one.
exports.isJsonSlabsFile = () => false
exports.decode = () => {
  throw new Error('json-slabs: not available here')
}
exports.encode = exports.decode
