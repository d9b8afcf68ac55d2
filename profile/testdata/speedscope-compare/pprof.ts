// A pprof profile (profile.proto of github.com/google/pprof), decoded as
// far as the comparison needs: each sample's frames, root first, with
// each frame's function name, file and line, its values and its string
// labels. It reads what `profdiff symbolize FILE -o OUT` writes: the
// profile a profdiff reader made, files and labels included, which
// profdiff's folded output does not show.
import * as zlib from 'zlib'

export interface PprofFrame {
  name: string
  file: string
  line: number
}

export interface PprofSample {
  frames: PprofFrame[] // root first
  values: number[]
  labels: Map<string, string[]>
}

export interface Pprof {
  sampleTypes: string[] // "type/unit"
  defaultIndex: number // the default sample type's index (pprof's rule: the last when unset)
  samples: PprofSample[]
}

// A protobuf field: its number, and its varint or its bytes.
type Field = {num: number; int: number; bytes: Uint8Array | null}

// fields decodes one message's fields. A varint is read as a number: the
// values here (ids, nanoseconds) are below 2^53.
function* fields(b: Uint8Array): Generator<Field> {
  let i = 0
  const varint = () => {
    let v = 0
    for (let shift = 0; ; shift += 7) {
      if (i >= b.length) throw new Error('pprof: a varint runs past its message')
      const c = b[i++]
      v += (c & 0x7f) * 2 ** shift
      if (c < 0x80) return v
    }
  }
  while (i < b.length) {
    const key = varint()
    const num = Math.floor(key / 8)
    switch (key & 7) {
      case 0:
        yield {num, int: varint(), bytes: null}
        break
      case 1:
        i += 8
        yield {num, int: 0, bytes: null}
        break
      case 2: {
        const n = varint()
        if (i + n > b.length) throw new Error('pprof: a field runs past its message')
        yield {num, int: 0, bytes: b.subarray(i, i + n)}
        i += n
        break
      }
      case 5:
        i += 4
        yield {num, int: 0, bytes: null}
        break
      default:
        throw new Error(`pprof: wire type ${key & 7}`)
    }
  }
}

// ints is a repeated integer field: packed (bytes) or one varint.
function ints(f: Field): number[] {
  if (f.bytes === null) return [f.int]
  const out: number[] = []
  let i = 0
  const b = f.bytes
  while (i < b.length) {
    let v = 0
    for (let shift = 0; ; shift += 7) {
      const c = b[i++]
      v += (c & 0x7f) * 2 ** shift
      if (c < 0x80) break
    }
    out.push(v)
  }
  return out
}

const utf8 = new TextDecoder()

// readPprof decodes a pprof file, gzipped or not.
export function readPprof(data: Uint8Array): Pprof {
  if (data[0] === 0x1f && data[1] === 0x8b) data = new Uint8Array(zlib.gunzipSync(data))
  const strings: string[] = []
  const raw = {types: [] as [number, number][], samples: [] as Uint8Array[], locations: [] as Uint8Array[], functions: [] as Uint8Array[], dflt: 0}
  for (const f of fields(data)) {
    switch (f.num) {
      case 1: {
        let t = 0, u = 0
        for (const g of fields(f.bytes!)) {
          if (g.num === 1) t = g.int
          if (g.num === 2) u = g.int
        }
        raw.types.push([t, u])
        break
      }
      case 2: raw.samples.push(f.bytes!); break
      case 4: raw.locations.push(f.bytes!); break
      case 5: raw.functions.push(f.bytes!); break
      case 6: strings.push(utf8.decode(f.bytes!)); break
      case 14: raw.dflt = f.int; break
    }
  }
  const str = (i: number) => strings[i] ?? ''
  const functions = new Map<number, {name: string; file: string}>()
  for (const b of raw.functions) {
    let id = 0, name = 0, file = 0
    for (const g of fields(b)) {
      if (g.num === 1) id = g.int
      if (g.num === 2) name = g.int
      if (g.num === 4) file = g.int
    }
    functions.set(id, {name: str(name), file: str(file)})
  }
  // A location's frames, root first (pprof lists its lines leaf first:
  // the inlined call before its caller).
  const locations = new Map<number, PprofFrame[]>()
  for (const b of raw.locations) {
    let id = 0
    const lines: PprofFrame[] = []
    for (const g of fields(b)) {
      if (g.num === 1) id = g.int
      if (g.num === 4) {
        let fn = 0, line = 0
        for (const h of fields(g.bytes!)) {
          if (h.num === 1) fn = h.int
          if (h.num === 2) line = h.int
        }
        const f = functions.get(fn)
        if (!f) throw new Error(`pprof: location ${id}: no function ${fn}`)
        lines.push({...f, line})
      }
    }
    locations.set(id, lines.reverse())
  }
  const sampleTypes = raw.types.map(([t, u]) => `${str(t)}/${str(u)}`)
  const dflt = raw.dflt ? sampleTypes.findIndex(t => t.startsWith(`${str(raw.dflt)}/`)) : -1
  const samples: PprofSample[] = []
  for (const b of raw.samples) {
    const locs: number[] = [], values: number[] = []
    const labels = new Map<string, string[]>()
    for (const g of fields(b)) {
      if (g.num === 1) locs.push(...ints(g))
      if (g.num === 2) values.push(...ints(g))
      if (g.num === 3) {
        let k = 0, s = 0
        for (const h of fields(g.bytes!)) {
          if (h.num === 1) k = h.int
          if (h.num === 2) s = h.int
        }
        if (s !== 0) labels.set(str(k), [...(labels.get(str(k)) || []), str(s)])
      }
    }
    const frames: PprofFrame[] = []
    for (const id of locs.reverse()) {
      const l = locations.get(id)
      if (!l) throw new Error(`pprof: a sample names no location ${id}`)
      frames.push(...l)
    }
    samples.push({frames, values, labels})
  }
  return {sampleTypes, defaultIndex: dflt >= 0 ? dflt : sampleTypes.length - 1, samples}
}
