// Writes a Gecko profile as Firefox writes it (MOZ_PROFILER_SHUTDOWN,
// gzipped or not) in the shape speedscope's Firefox importer reads: the
// DevTools export's {"profile": …, "systemHost": {"name": "Firefox"}}
// wrapper, with one sample without a stack appended to each of the top
// profile's threads, one interval after its last sample. speedscope's
// importer never closes the stack of a thread's last sample and fails
// ("Tried to complete profile construction with a non-empty stack")
// unless that stack is empty; the appended sample ends it, so the last
// real sample weighs the interval in speedscope too. profdiff leaves the
// appended samples out (no stack) and reads the rest as in the original.
//
// usage: node devtools-wrap.js GECKO-PROFILE > OUT.json
const fs = require('fs')
const zlib = require('zlib')

let data = fs.readFileSync(process.argv[2])
if (data[0] === 0x1f && data[1] === 0x8b) data = zlib.gunzipSync(data)
const profile = JSON.parse(data.toString('utf8'))
for (const t of profile.threads) {
  const s = t.samples
  if (s.data.length === 0) continue
  const row = new Array(s.data[0].length).fill(null)
  row[s.schema.time] = s.data[s.data.length - 1][s.schema.time] + profile.meta.interval
  s.data.push(row)
}
process.stdout.write(JSON.stringify({profile, systemHost: {name: 'Firefox'}}))
