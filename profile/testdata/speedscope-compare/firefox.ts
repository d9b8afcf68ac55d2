// speedscope's Firefox importer (src/import/firefox.ts, importFromFirefox)
// reads the DevTools export ({"profile": …}) with conventions of its own:
//
//   - one thread: the top profile's only thread, or its first GeckoMain
//     (not the threads of "processes");
//   - it reads a location string with its own pattern, "NAME (FILE…)"
//     (speedscopeFrame), and keeps only those frames, less Firefox's own
//     JavaScript (FILE resource:…, self-hosted): C++ labels, addresses,
//     a script's top level ("URL:LINE") and, in newer Firefox versions,
//     every JavaScript frame ("NAME (URL:LINE:COLUMN)[SOURCE]") are
//     dropped, and a label with a parenthesis ("CC (Free Snow White)") is
//     kept as a function CC of the file "Free Snow White". profdiff reads
//     every frame, named as the Firefox Profiler's processing names it;
//   - a frame is its location string: the same name in two files is two
//     frames;
//   - a sample weighs the time to the next sample of the thread (the
//     last one nothing, and speedscope fails unless its stack is empty),
//     where profdiff weighs each sample the interval, as the Firefox
//     Profiler's call tree counts samples.
//
// The comparison reads the profile profdiff's reader made with each
// frame's file and each sample's thread (`profdiff symbolize FILE -o OUT`,
// pprof: profdiff's folded output names frames only), keeps the samples of
// speedscope's thread, and maps each frame through the thread's location
// strings: a location whose profdiff name and file (profdiffFrame, the
// reader's rule) are the frame's gives speedscope's frame for it, or
// none. A frame that locations of both kinds name fails the file. Where
// the sampler ran late (Firefox 59's firefox.json has gaps of up to 5.5 ms
// in its page's JavaScript), each sample's weight is moved from the
// interval to the time to the next sample, on profdiff's stack of it,
// read from the file's stack and frame tables; the totals must then agree.
import {Frame} from './src/lib/profile'
import {Pprof} from './pprof'

export function isFirefoxImporter(importer: string): boolean {
  return importer.includes('Importing as Firefox profile')
}

// frameKey is a frame's key in both readers' stacks: its name and file.
function frameKey(name: string, file: string): string {
  return `${name} (${file})`
}

// firefoxName keys a frame of speedscope's Firefox importer.
export function firefoxName(f: Frame): string {
  return frameKey(f.name, f.file || '')
}

// speedscopeFrame is speedscope's key of a location string, or null where
// its importer drops the frame.
function speedscopeFrame(loc: string): string | null {
  const m = /(.*)\s+\((.*?)(?::(\d+))?(?::(\d+))?\)$/.exec(loc)
  if (!m || m[2].startsWith('resource:') || m[2] === 'self-hosted' || m[2].startsWith('self-hosted:')) return null
  return frameKey(m[1], m[2])
}

// profdiffFrame is profdiff's key of a location string (profile/firefox's
// parseLocation, the Firefox Profiler's rule), or null for an address,
// which it names by its library.
function profdiffFrame(loc: string): string | null {
  if (loc.startsWith('0x')) return null
  for (const re of [/^(.*) \(in ([^)]*)\) \+ [0-9]+$/, /^(.*) \(in ([^)]*)\) \(.*:.*\)$/, /^(.*) \(in ([^)]*)\)$/]) {
    const m = re.exec(loc)
    if (m) return frameKey(m[1].replace(/^non-virtual thunk to /, ''), '')
  }
  for (const re of [/^(.*) \((.+?):([0-9]+)(?::[0-9]+)?\)(?:\[\d+\])?$/, /^()(.+?):([0-9]+)(?::[0-9]+)?(?:\[\d+\])?$/]) {
    const m = re.exec(loc)
    if (m) {
      const file = m[2].split(' -> ').pop()!
      return frameKey(m[1] || `(root scope) ${file}`, file)
    }
  }
  return frameKey(loc, '')
}

// threadLabels lists the "thread" label profdiff's Firefox reader gives
// each thread of a Gecko profile (its name and process type), the top
// profile's threads first, then those of its processes; and the label of
// the thread speedscope reads, and that thread.
function threadLabels(json: any): {all: string[]; speedscope: string | null; thread: any} {
  const all: string[] = []
  const parse = (v: any) => (typeof v === 'string' ? JSON.parse(v) : v)
  const label = (t: any) => (t.processType ? `${t.name} (${t.processType})` : t.name)
  const walk = (p: any) => {
    for (const t of p.threads || []) all.push(label(parse(t)))
    for (const sub of p.processes || []) walk(parse(sub))
  }
  const top = json.profile
  walk(top)
  const threads = (top.threads || []).map(parse)
  const t = threads.length === 1 ? threads[0] : threads.find((t: any) => t.name === 'GeckoMain')
  return {all, speedscope: t ? label(t) : null, thread: t}
}

// column is the index of a table's column.
function column(thread: any, table: string, name: string): number {
  const i = thread[table].schema?.[name]
  if (typeof i !== 'number') throw new Error(`${thread.name}: ${table} has no ${name} column`)
  return i
}

// frameMap maps profdiff's key of each location of the thread's frame
// table to speedscope's (null: speedscope drops it); it throws where
// locations with one profdiff key are kept and dropped, or kept as two.
function frameMap(thread: any): Map<string, string | null> {
  const loc = column(thread, 'frameTable', 'location')
  const out = new Map<string, string | null>()
  for (const row of thread.frameTable.data) {
    const s: string = thread.stringTable[row[loc]]
    const pd = profdiffFrame(s)
    if (pd === null) continue
    const ss = speedscopeFrame(s)
    if (out.has(pd) && out.get(pd) !== ss) throw new Error(`profdiff's frame ${pd} is ${out.get(pd)} and ${ss} in speedscope`)
    out.set(pd, ss)
  }
  return out
}

// firefoxConventions returns profdiff's stacks under speedscope's rules:
// pprof is the profile profdiff's reader made of the file, json the file.
// It checks that pprof holds what profdiff's folded output (pd) holds,
// and fails where the thread speedscope reads cannot be told apart by
// its label. It returns profdiff's stacks under speedscope's rules (pd)
// and before the weighting is moved (byInterval).
export function firefoxConventions(json: any, pprof: Pprof, pd: Map<string, number>): {pd: Map<string, number>; byInterval: Map<string, number>; notes: string[]} {
  const {all, speedscope, thread} = threadLabels(json)
  if (speedscope === null) throw new Error('speedscope reads no thread (no GeckoMain among several)')
  const same = all.filter(l => l === speedscope).length
  if (same !== 1) throw new Error(`${same} threads are labelled "${speedscope}": the one speedscope reads cannot be told apart`)
  const frames = frameMap(thread)
  const v = pprof.defaultIndex
  let total = 0, foldedTotal = 0, kept = 0
  for (const w of pd.values()) foldedTotal += w
  const out = new Map<string, number>()
  for (const s of pprof.samples) {
    total += s.values[v]
    if ((s.labels.get('thread') || [])[0] !== speedscope) continue
    const key = s.frames
      .map(f => frames.get(frameKey(f.name, f.file)))
      .filter(k => k)
      .join(';')
    kept += s.values[v]
    if (key !== '') out.set(key, (out.get(key) || 0) + s.values[v])
  }
  if (total !== foldedTotal) throw new Error(`profdiff's pprof holds ${total}, its folded output ${foldedTotal}`)
  const pct = (x: number) => `${((x / total) * 100).toFixed(3)}%`
  const notes = [`thread ${speedscope} ${pct(kept)}`, `frames speedscope drops only ${pct(kept - sum(out))}`]
  const timed = new Map(out)
  const moved = byTime(thread, json.profile.meta.interval, frames, timed)
  notes.push(`time to the next sample ${pct(moved)} moved`)
  return {pd: timed, byInterval: out, notes}
}

// byTime moves the weight of each of the thread's samples from the
// interval (profdiff's, in nanoseconds) to the time to the next sample
// (speedscope's), on the sample's stack as profdiff names it, mapped by
// frames; it returns the weight moved (the sum of the differences' sizes).
function byTime(thread: any, interval: number, frames: Map<string, string | null>, pd: Map<string, number>): number {
  if (thread.samples.schema?.weight !== undefined) throw new Error(`${thread.name}: weighted samples are not compared`)
  const sStack = column(thread, 'samples', 'stack'), sTime = column(thread, 'samples', 'time')
  const kPrefix = column(thread, 'stackTable', 'prefix'), kFrame = column(thread, 'stackTable', 'frame')
  const fLoc = column(thread, 'frameTable', 'location')
  const stacks = thread.stackTable.data, locs = thread.frameTable.data
  const keys = new Map<number, string>()
  const key = (s: number): string => {
    let k = keys.get(s)
    if (k !== undefined) return k
    const names: string[] = []
    for (let i: number | null = s; i !== null; i = stacks[i][kPrefix]) {
      const pd = profdiffFrame(thread.stringTable[locs[stacks[i][kFrame]][fLoc]])
      const ss = pd === null ? null : frames.get(pd)
      if (ss) names.push(ss)
    }
    k = names.reverse().join(';')
    keys.set(s, k)
    return k
  }
  const step = Math.round(interval * 1e6)
  let moved = 0
  const rows = thread.samples.data
  for (let i = 0; i < rows.length; i++) {
    const s = rows[i][sStack]
    if (s === null || s === undefined) continue
    const k = key(s)
    if (k === '') continue
    const d = (i + 1 < rows.length ? (rows[i + 1][sTime] - rows[i][sTime]) * 1e6 : 0) - step
    pd.set(k, (pd.get(k) || 0) + d)
    moved += Math.abs(d)
  }
  return moved
}

function sum(m: Map<string, number>) {
  let t = 0
  for (const v of m.values()) t += v
  return t
}
