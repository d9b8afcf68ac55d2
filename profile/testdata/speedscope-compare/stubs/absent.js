// Stands for the packages of the importers this comparison does not use
// (pprof's protobufjs and long, JFR's jfrview, Instruments' jszip): each
// use fails, which speedscope's callers read as "not this format".
const absent = () => {
  throw new Error('importer not bundled in this comparison')
}
class Long {}
module.exports = {
  __esModule: true,
  default: Object.assign(absent, {fromBits: absent}),
  Long,
  Reader: {create: absent},
  Writer: {create: absent},
  util: {Long: undefined, emptyArray: Object.freeze([]), emptyObject: Object.freeze({})},
  roots: {},
  interpret_jfr: absent,
  loadAsync: absent,
}
