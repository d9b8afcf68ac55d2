// speedscope's Firefox importer (src/import/firefox.ts, importFromFirefox)
// reads the DevTools export ({"profile": …}) with conventions of its own:
//
//   - one thread: the top profile's only thread, or its first GeckoMain
//     (not the threads of "processes");
//   - only the frames whose location is "NAME (FILE[:LINE[:COLUMN]])" and
//     whose FILE is not Firefox's own (resource:…, self-hosted): C++
//     labels, addresses and Firefox's JavaScript are dropped;
//   - a sample weighs the time to the next sample of the thread (the
//     last one nothing, and speedscope fails unless its stack is empty),
//     where profdiff weighs each sample the interval, as the Firefox
//     Profiler's call tree counts samples. Where the sampler ran late
//     (Firefox 59's firefox.json has gaps of up to 5.5 ms in its page's
//     JavaScript), the two differ: the comparison moves each sample's
//     difference (time to the next sample less the interval) onto
//     profdiff's stack of it, found by reading the file's stack and frame
//     tables as profile/firefox does, and then the totals must agree;
//   - a frame is its location string: the same name in two files is two
//     frames. Its line is the function's (the location's), where
//     profdiff's is the line the sample was at (the frame table's line
//     column).
//
// profdiff reads every frame of every thread. The comparison applies
// speedscope's rules to the profile profdiff's reader made, read with each
// frame's file and line and each sample's thread from
// `profdiff symbolize FILE -o OUT` (pprof), since profdiff's folded output
// names frames only; and both readers' frames are keyed by name and file,
// so that no two functions of one name are confused.
import {Frame} from './src/lib/profile'
import {Pprof} from './pprof'

export function isFirefoxImporter(importer: string): boolean {
  return importer.includes('Importing as Firefox profile')
}

// frameKey is a frame's key in both readers' stacks: its name and file
// as a Gecko location writes them.
function frameKey(name: string, file: string): string {
  return `${name} (${file})`
}

// firefoxName keys a frame of speedscope's Firefox importer.
export function firefoxName(f: Frame): string {
  return frameKey(f.name, f.file || '')
}

// firefoxSkipped is speedscope's test for Firefox's own JavaScript.
function firefoxSkipped(file: string): boolean {
  return file.startsWith('resource:') || file === 'self-hosted' || file.startsWith('self-hosted:')
}

// threadLabels lists the "thread" label profdiff's Firefox reader gives
// each thread of a Gecko profile (its name and process type), the top
// profile's threads first, then those of its processes; and the label of
// the thread speedscope reads.
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

// firefoxConventions returns profdiff's stacks under speedscope's rules:
// pprof is the profile profdiff's reader made of the file, json the file.
// It checks that pprof holds what profdiff's folded output (pd) holds,
// and fails where the thread speedscope reads cannot be told apart by
// its label.
// It returns profdiff's stacks under speedscope's rules (pd) and before
// the weighting is moved (byInterval).
export function firefoxConventions(json: any, pprof: Pprof, pd: Map<string, number>): {pd: Map<string, number>; byInterval: Map<string, number>; notes: string[]} {
  const {all, speedscope, thread} = threadLabels(json)
  if (speedscope === null) throw new Error('speedscope reads no thread (no GeckoMain among several)')
  const same = all.filter(l => l === speedscope).length
  if (same !== 1) throw new Error(`${same} threads are labelled "${speedscope}": the one speedscope reads cannot be told apart`)
  const v = pprof.defaultIndex
  let total = 0, foldedTotal = 0, kept = 0
  for (const w of pd.values()) foldedTotal += w
  const out = new Map<string, number>()
  for (const s of pprof.samples) {
    total += s.values[v]
    if ((s.labels.get('thread') || [])[0] !== speedscope) continue
    const key = s.frames
      .filter(f => f.file !== '' && !firefoxSkipped(f.file))
      .map(f => frameKey(f.name, f.file))
      .join(';')
    kept += s.values[v]
    if (key !== '') out.set(key, (out.get(key) || 0) + s.values[v])
  }
  if (total !== foldedTotal) throw new Error(`profdiff's pprof holds ${total}, its folded output ${foldedTotal}`)
  const pct = (x: number) => `${((x / total) * 100).toFixed(3)}%`
  const notes = [`thread ${speedscope} ${pct(kept)}`, `Firefox's own frames only ${pct(kept - sum(out))}`]
  const timed = new Map(out)
  const moved = byTime(thread, json.profile.meta.interval, timed)
  notes.push(`time to the next sample ${pct(moved)} moved`)
  return {pd: timed, byInterval: out, notes}
}

// geckoFrame is profile/firefox's rule for a JavaScript location (its
// jsFrame): "NAME (FILE[:LINE[:COLUMN]])" with a file.
const geckoFrame = /^(.*) \((.*?)(?::(\d+))?(?::(\d+))?\)$/

// byTime moves the weight of each of the thread's samples from the
// interval (profdiff's, in nanoseconds) to the time to the next sample
// (speedscope's), on the sample's stack under speedscope's rules, keyed
// as profdiff's frames are; it returns the weight moved (the sum of the
// differences' sizes).
function byTime(thread: any, interval: number, pd: Map<string, number>): number {
  const col = (t: any, name: string) => {
    const i = t.schema?.[name]
    if (typeof i !== 'number') throw new Error(`${thread.name}: no ${name} column`)
    return i
  }
  const samples = thread.samples, stacks = thread.stackTable, frames = thread.frameTable
  if (samples.schema?.weight !== undefined) throw new Error(`${thread.name}: weighted samples are not compared`)
  const sStack = col(samples, 'stack'), sTime = col(samples, 'time')
  const kPrefix = col(stacks, 'prefix'), kFrame = col(stacks, 'frame'), fLoc = col(frames, 'location')
  const keys = new Map<number, string>()
  const key = (s: number): string => {
    let k = keys.get(s)
    if (k !== undefined) return k
    const names: string[] = []
    for (let i: number | null = s; i !== null; i = stacks.data[i][kPrefix]) {
      const loc: string = thread.stringTable[frames.data[stacks.data[i][kFrame]][fLoc]]
      const m = geckoFrame.exec(loc)
      if (m && m[2] !== '' && !firefoxSkipped(m[2])) names.push(frameKey(m[1], m[2]))
    }
    k = names.reverse().join(';')
    keys.set(s, k)
    return k
  }
  const step = Math.round(interval * 1e6)
  let moved = 0
  const rows = samples.data
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
