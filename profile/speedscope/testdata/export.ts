// Reads a Chrome/Node heap profile or a pprof profile with speedscope's own
// importer (the one src/import/index.ts picks for it) and writes speedscope's
// own export of the result (exportProfileGroup, what "Export" saves).
import * as fs from 'fs'
import * as path from 'path'
import * as zlib from 'zlib'
import {importFromChromeHeapProfile} from './src/import/v8heapalloc'
import {importAsPprofProfile} from './src/import/pprof'
import {exportProfileGroup} from './src/lib/file-format'
import Long from 'long'

const [input, output, mode] = process.argv.slice(2)
let buf = fs.readFileSync(input)
// speedscope's index.ts inflates gzipped input before it tries pprof.
if (buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf)
const profile = input.endsWith('.heapprofile')
  ? importFromChromeHeapProfile(JSON.parse(buf.toString('utf8')))
  : importAsPprofProfile(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength))
if (!profile) throw new Error('speedscope could not import ' + input)
const name = path.basename(input)
// --long-lines: keep each frame's line as the Long object protobufjs decodes
// an int64 into, as pprof.ts does when `line instanceof Long` fails (a second
// copy of the long package); JSON.stringify then writes {low, high, unsigned}.
if (mode === '--long-lines') {
  profile.forEachFrame(f => {
    if (f.line != null) (f as any).line = Long.fromNumber(f.line)
  })
}
profile.setName(name)
fs.writeFileSync(output, JSON.stringify(exportProfileGroup({name, indexToView: 0, profiles: [profile]})))
