// speedscope's Chrome importers (src/import/chrome.ts: "Chrome CPU
// Profile", its "(old format)", "Chrome Timeline" and "Chrome Timeline
// Object") build a timeline from V8's samples with conventions of their
// own. This file applies them to profdiff's stacks, so that the two
// readers' stacks can be compared, and says on the file's line what each
// convention moved (see README.md):
//
//   - speedscope leaves out (root), (idle) and frames of native dummy.js
//     (shouldIgnoreFunction): the stacks profdiff roots at the first two
//     are dropped, and a sample's frames below a native dummy.js one;
//   - it puts (garbage collector) and (program) on top of the previous
//     sample's stack (shouldPlaceOnTopOfPreviousStack): each is compared by
//     its total, one pseudo-stack per reader;
//   - a sample lasts until the next sample whose stack differs, and the
//     last one ends where it starts, so it weighs nothing: profdiff's
//     weight of each profile's last sample is taken off its stack, found
//     here by reading the file as profdiff reads it (profile/v8,
//     profile/chrometrace), and the totals then must agree;
//   - names: speedscope names a nameless function "(anonymous FILE:LINE)",
//     profdiff "(anonymous)"; profdiff's V8 reader names a Node built-in
//     module's function "node:MODULE.NAME", speedscope by its name; and
//     profdiff's folded output writes ';' in a name as ':' and line breaks
//     and tabs as spaces;
//   - where speedscope misreads a file (speedscopeInput), it is also given
//     the file corrected, and both results are printed.
import {Frame} from './src/lib/profile'

export type ChromeKind = 'cpuprofile' | 'old' | 'timeline'

// chromeKind is the Chrome importer speedscope chose (from the line it logs),
// or null for any other importer.
export function chromeKind(importer: string): ChromeKind | null {
  if (importer.includes('Importing as Chrome CPU Profile (old format)')) return 'old'
  if (importer.includes('Importing as Chrome CPU Profile')) return 'cpuprofile'
  if (importer.includes('Importing as Chrome Timeline')) return 'timeline'
  return null
}

// builtinModule is profdiff's rule (profile/v8's builtinModule) for the
// module of a Node built-in script URL: "node:internal/timers", or Node
// 10's "internal/timers.js".
function builtinModule(url: string): string | null {
  if (url.startsWith('node:')) return url.length > 5 ? url.slice(5) : null
  if (url === '' || url.startsWith('/') || url.includes(':') || url.startsWith('.') || !url.endsWith('.js') || url.includes('\\')) {
    return null
  }
  return url.slice(0, -3)
}

// v8Name is profdiff's V8 reader's frame name (profile/v8's Name).
function v8Name(fn: string, url: string): string {
  if (fn === '') fn = '(anonymous)'
  const mod = builtinModule(url)
  return mod === null ? fn : `node:${mod}.${fn}`
}

// chromeName returns the function that turns a frame speedscope's Chrome
// importer made into the name profdiff gives the same call frame.
export function chromeName(kind: ChromeKind): (f: Frame) => string {
  return (f: Frame) => {
    let fn = f.name
    // speedscope: functionName || `(anonymous ${basename}:${line})` (line 1-based).
    if (f.file && fn === `(anonymous ${f.file.split('/').pop()}:${f.line})`) fn = ''
    // profdiff's folded output makes a name safe to fold (diff/render's
    // foldedFrame): ';' becomes ':', line breaks and tabs spaces (a
    // RegExp's frame is named by its source).
    const safe = (n: string) => n.replace(/;/g, ':').replace(/[\n\r\t\v\f]/g, ' ').trim()
    if (kind === 'timeline') return safe(fn === '' ? '(anonymous)' : fn)
    return safe(v8Name(fn, f.file || ''))
  }
}

// What chromeConventions works on: the file's JSON, both readers' stacks
// (speedscope's in µs, profdiff's in ns), and ways to ask each reader more.
export interface ChromeInput {
  json: any
  ss: Map<string, number>
  pd: Map<string, number>
  profdiffJSON: (...flags: string[]) => any // profdiff top --format json FLAGS FILE
  speedscope: (data: ArrayBuffer) => Promise<Map<string, number>> // speedscope's stacks of other bytes
  largest: (ss: Map<string, number>, pd: Map<string, number>) => string // the largest difference, as printed
}

// chromeConventions returns both readers' stacks as compared under
// speedscope's Chrome conventions, and what each convention moved.
export async function chromeConventions(kind: ChromeKind, in_: ChromeInput) {
  let {ss, pd} = in_
  // profdiff keeps (program) apart from its buckets and its call tree
  // ("native or blocked"), so its folded stacks lack it; its JSON gives
  // that time, of (program) alone with --focus.
  const program = in_.profdiffJSON('--focus', '^\\(program\\)$').native_unknown?.value || 0
  if (program > 0) pd = new Map(pd).set('(program)', (pd.get('(program)') || 0) + program)
  const adjusted = adjustProfdiff(kind, in_.json, pd)
  pd = adjusted.pd
  const notes = adjusted.notes
  const fixed = speedscopeInput(kind, in_.json)
  if (fixed) {
    notes.push(`speedscope as is ${in_.largest(ss, pd)}; below, given the file with ${fixed.why}`)
    ss = await in_.speedscope(fixed.data)
  }
  // With the last samples off, both totals are the time from each
  // thread's first sample to its last (µs and ns).
  const gap = [...pd.values()].reduce((a, b) => a + b, 0) - [...ss.values()].reduce((a, b) => a + b, 0) * 1000
  notes.push(`totals ${Math.abs(gap) < 1 ? 'agree' : `differ by ${Math.round(gap)} ns`}`)
  return {ss, pd, notes}
}

// speedscopeInput returns the input to give speedscope instead of the
// file's, and what was changed, or null, where speedscope misreads a file
// (the comparison prints both results):
//
//   - An old-format profile with one timestamp more than samples starts
//     them with its startTime (speedscope's own Node 10 example is its
//     Chrome/65/simple.cpuprofile so written: the same samples, and
//     timestamps[1:] are that file's sample times). profdiff skips it;
//     speedscope (v8cpuFormatter's timestampsToDeltas) gives sample i the
//     time timestamps[i], so each sample takes the interval of the one
//     before it. It is given the file without that first timestamp.
//   - A trace in which V8 profiles of different processes share an id
//     (each Chromium renderer numbers its profiles from 0x1): speedscope
//     keys profiles by id alone (importFromChromeTimeline's
//     cpuProfileByID), so their chunks and node ids mix into one profile;
//     profdiff keys them by process and id. It is given the file with the
//     ids made unique per process.
//   - Samples out of time order (V8 writes a time delta below zero now and
//     then, Chromium dozens a minute): speedscope clamps such a sample's
//     time to the previous one (its PR 305), profdiff sorts the samples by
//     time, as DevTools' CPUProfileDataModel does (sortSamples). It is
//     given each profile's samples in time order (the same chunks and
//     sample counts, the deltas recomputed), which profdiff reads as it
//     reads the file.
function speedscopeInput(kind: ChromeKind, json: any): {data: ArrayBuffer; why: string} | null {
  const encode = (v: any) => new TextEncoder().encode(JSON.stringify(v)).buffer as ArrayBuffer
  if (kind === 'old') {
    if (json.timestamps.length !== json.samples.length + 1) return null
    return {data: encode({...json, timestamps: json.timestamps.slice(1)}), why: 'its first timestamp (its startTime) left out'}
  }
  const why: string[] = []
  const copy = JSON.parse(JSON.stringify(json))
  // profiles: each one's start and its sample lists (samples and deltas), in file order.
  const profiles: {start: number; parts: {samples: number[]; deltas: number[]}[]}[] = []
  if (kind === 'cpuprofile') {
    profiles.push({start: copy.startTime, parts: [{samples: copy.samples, deltas: copy.timeDeltas}]})
  } else {
    const events: any[] = Array.isArray(copy) ? copy : copy.traceEvents
    const pids = new Map<string, Set<string>>()
    for (const e of events) {
      if ((e.name === 'Profile' || e.name === 'ProfileChunk') && e.id != null) {
        if (!pids.has(e.id)) pids.set(e.id, new Set())
        pids.get(e.id)!.add(String(e.pid))
      }
    }
    const shared = [...pids].filter(([, p]) => p.size > 1).map(([id]) => id)
    if (shared.length > 0) {
      why.push(`profile ids made unique per process (${shared.join(', ')} used by ${shared.map(id => pids.get(id)!.size).join(', ')} processes)`)
    }
    const byKey = new Map<string, (typeof profiles)[0]>()
    events.forEach((e, i) => {
      const data = e.args?.data
      if (e.name === 'Profile' || e.name === 'ProfileChunk') {
        const key = `${e.pid}\u0000${e.id}`
        if (shared.includes(e.id)) e.id = `${e.pid}:${e.id}`
        if (!byKey.has(key)) byKey.set(key, {start: Number(e.ts), parts: []})
        const p = byKey.get(key)!
        if (e.name === 'Profile' && data?.startTime != null) p.start = Number(data.startTime)
        if (e.name === 'ProfileChunk' && data?.cpuProfile?.samples && data.timeDeltas) p.parts.push({samples: data.cpuProfile.samples, deltas: data.timeDeltas})
      } else if (e.name === 'CpuProfile' && data?.cpuProfile?.samples) {
        const cp = data.cpuProfile
        byKey.set(`CpuProfile ${i}`, {start: cp.startTime ?? Number(e.ts), parts: [{samples: cp.samples, deltas: cp.timeDeltas}]})
      }
    })
    profiles.push(...byKey.values())
  }
  let moved = 0
  for (const p of profiles) {
    let t = p.start
    const all: {s: number; t: number; k: number}[] = []
    for (const part of p.parts) part.samples.forEach((s, i) => i < part.deltas.length && all.push({s, t: (t += part.deltas[i]), k: all.length}))
    all.sort((a, b) => a.t - b.t || a.k - b.k)
    if (all.every((x, i) => x.k === i)) continue
    moved += all.filter((x, i) => x.k !== i).length
    let prev = p.start, k = 0
    for (const part of p.parts) {
      for (let i = 0; i < part.samples.length && i < part.deltas.length; i++, k++) {
        part.samples[i] = all[k].s
        part.deltas[i] = all[k].t - prev
        prev = all[k].t
      }
    }
  }
  if (moved > 0) why.push(`samples in time order (${moved} moved)`)
  return why.length === 0 ? null : {data: encode(copy), why: why.join(' and ')}
}

const pseudoOnTop = ['(garbage collector)', '(program)']

// pseudoTotal returns the pseudo-stack a stack is compared under: the
// innermost (garbage collector) or (program) frame in it, or the stack.
function pseudoTotal(stack: string): string {
  const frames = stack.split(';')
  for (let i = frames.length - 1; i >= 0; i--) {
    if (pseudoOnTop.includes(frames[i])) return `${frames[i]} (its total)`
  }
  return stack
}

function regroup(m: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>()
  for (const [k, v] of m) out.set(pseudoTotal(k), (out.get(pseudoTotal(k)) || 0) + v)
  return out
}

// adjustSpeedscope groups speedscope's stacks that end in (garbage
// collector) or (program) into one pseudo-stack each.
export function adjustSpeedscope(ss: Map<string, number>): Map<string, number> {
  return regroup(ss)
}

// A tick is one sample as profdiff reads it: its frames root first (as
// profdiff's folded output names them), whether each is in a script
// speedscope ignores ("native dummy.js", V8's script for its natives),
// and profdiff's weight of it.
export interface Tick {
  frames: string[]
  dummy: boolean[]
  nanos: number
}

export const stackOf = (frames: string[]) => (frames.length === 0 ? '[no stack]' : frames.join(';'))

// adjustProfdiff applies speedscope's conventions to profdiff's stacks
// (in nanoseconds) and returns them with what it did, for the file's line.
function adjustProfdiff(kind: ChromeKind, json: any, pd: Map<string, number>): {pd: Map<string, number>; notes: string[]} {
  const total = [...pd.values()].reduce((a, b) => a + b, 0)
  const pct = (v: number) => `${((v / total) * 100).toFixed(3)}%`
  const notes: string[] = []
  const out = new Map(pd)
  const take = (stack: string, nanos: number) => {
    const v = out.get(stack)
    if (v === undefined || v < nanos) throw new Error(`profdiff has ${v} ns at ${stack}, less than a sample's ${nanos} ns`)
    if (v === nanos) out.delete(stack)
    else out.set(stack, v - nanos)
  }
  const threads = kind === 'timeline' ? timelineTicks(json) : [cpuProfileTicks(json)]
  let lastNanos = 0, dummyNanos = 0, dummies = 0, backwards = 0
  for (const {ticks, backwards: b} of threads) {
    backwards += b
    ticks.forEach((t, i) => {
      const last = i === ticks.length - 1
      const cut = t.dummy.lastIndexOf(true)
      if (!last && cut < 0) return
      take(stackOf(t.frames), t.nanos)
      if (last) {
        lastNanos += t.nanos
        return
      }
      // speedscope opens a stack's frames from its leaf up to the first
      // frame it ignores: the frames above a native dummy.js frame alone.
      dummies++
      dummyNanos += t.nanos
      const kept = t.frames.slice(cut + 1)
      if (kept.length > 0) out.set(stackOf(kept), (out.get(stackOf(kept)) || 0) + t.nanos)
    })
  }
  notes.push(`last sample${threads.length === 1 ? '' : 's'} of ${threads.length} thread${threads.length === 1 ? '' : 's'} taken off (${pct(lastNanos)})`)
  // See speedscopeInput.
  if (backwards > 0) notes.push(`${backwards} samples out of time order`)
  if (dummies > 0) notes.push(`${dummies} samples in native dummy.js cut there (${pct(dummyNanos)})`)
  const dropped = new Map<string, number>()
  for (const [k, v] of out) {
    // A sample of (root) itself is profile/chrometrace's "[no stack]".
    const root = k === '[no stack]' ? '(root)' : k.split(';')[0]
    if (root === '(idle)' || root === '(root)') {
      dropped.set(root, (dropped.get(root) || 0) + v)
      out.delete(k)
    }
  }
  for (const [root, v] of [...dropped].sort()) notes.push(`${root} dropped (${pct(v)})`)
  const grouped = regroup(out)
  for (const p of pseudoOnTop) {
    const v = grouped.get(`${p} (its total)`)
    if (v !== undefined) notes.push(`${p} by its total (${pct(v)})`)
  }
  return {pd: grouped, notes}
}

// A thread's ticks in time order, and how many samples the file put
// before the one written ahead of them (a time delta below zero).
export interface Thread {
  ticks: Tick[]
  backwards: number
}

// weigh returns the ticks of one thread in time order (stable, as Go's
// sort.SliceStable), each weighing the time to the next; the last one
// weighs last(its time, the times in order).
export function weigh(ts: {frames: string[]; dummy: boolean[]; t: number}[], last: (t: number, sorted: number[]) => number): Thread {
  const order = ts.map((_, i) => i).sort((a, b) => ts[a].t - ts[b].t || a - b)
  const sorted = order.map(i => ts[i].t)
  const ticks = order.map((i, k) => ({
    frames: ts[i].frames,
    dummy: ts[i].dummy,
    nanos: Math.round((k + 1 < order.length ? sorted[k + 1] - sorted[k] : last(sorted[k], sorted)) * 1e3),
  }))
  return {ticks, backwards: ts.filter((x, i) => i > 0 && x.t < ts[i - 1].t).length}
}

// cpuProfileTicks reads a .cpuprofile as profile/v8 does: the last sample
// weighs the time to endTime when that is after it, else the median
// interval.
function cpuProfileTicks(f: any): Thread {
  type N = {id: number; fn: string; url: string; parent?: number; children?: number[]}
  const nodes: N[] = []
  let times: number[]
  let end = f.endTime
  if (f.head) {
    const flatten = (n: any, parent?: number) => {
      nodes.push({id: n.id, fn: n.functionName || '', url: n.url || '', parent})
      for (const c of n.children || []) flatten(c, n.id)
    }
    flatten(f.head)
    times = f.timestamps.length === f.samples.length + 1 ? f.timestamps.slice(1) : f.timestamps
    end *= 1e6 // seconds in this shape
  } else {
    for (const n of f.nodes) {
      nodes.push({id: n.id, fn: n.callFrame?.functionName || '', url: n.callFrame?.url || '', parent: n.parent, children: n.children})
    }
    let t = f.startTime
    times = f.timeDeltas.map((d: number) => (t += d))
  }
  if (!(Math.abs(end) <= 1e15)) end = 0
  const byId = new Map(nodes.map(n => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of nodes) if (n.parent !== undefined) parent.set(n.id, n.parent)
  for (const n of nodes) for (const c of n.children || []) parent.set(c, n.id)
  const ticks = (f.samples as number[]).map((leaf, i) => {
    const frames: string[] = [], dummy: boolean[] = []
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!
      if (!parent.has(id) && n.fn === '(root)' && n.url === '') break
      frames.push(v8Name(n.fn, n.url))
      dummy.push(n.url === 'native dummy.js')
    }
    if (frames.length === 0) frames.push(v8Name(byId.get(leaf)!.fn, byId.get(leaf)!.url)), dummy.push(false)
    return {frames: frames.reverse(), dummy: dummy.reverse(), t: times[i]}
  })
  return weigh(ticks, (t, sorted) => {
    if (end > t) return end - t
    const gaps = sorted.slice(1).map((x, k) => x - sorted[k]).sort((a, b) => a - b)
    return gaps.length > 0 ? gaps[Math.floor(gaps.length / 2)] : 0
  })
}

// timelineTicks reads a trace's V8 profiles as profile/chrometrace does
// (events in file order; a profile per pid and id, on the thread of its
// first event; a CpuProfile event a profile of its own), one list per
// thread: a thread's last sample weighs the interval before it.
function timelineTicks(doc: any): Thread[] {
  const events: any[] = Array.isArray(doc) ? doc : doc.traceEvents
  type P = {thread: string; t: number; nodes: Map<number, any>; parent: Map<number, number>; hits: {node: number; ts: number}[]}
  const profs = new Map<string, P>()
  const order: P[] = []
  const get = (e: any, key: string) => {
    const k = `${e.pid}\u0000${key}`
    let p = profs.get(k)
    if (!p) {
      p = {thread: `${e.pid}\u0000${e.tid}`, t: Number(e.ts), nodes: new Map(), parent: new Map(), hits: []}
      profs.set(k, p)
      order.push(p)
    }
    return p
  }
  const add = (p: P, cp: any, deltas: number[]) => {
    for (const n of cp.nodes || []) {
      p.nodes.set(n.id, n)
      if (n.parent != null) p.parent.set(n.id, n.parent)
      for (const c of n.children || []) p.parent.set(c, n.id)
    }
    ;(cp.samples || []).forEach((n: number, i: number) => {
      if (i >= deltas.length) return
      p.t += Number(deltas[i])
      p.hits.push({node: n, ts: p.t})
    })
  }
  events.forEach((e, i) => {
    const data = e.args?.data
    if (!data) return
    if (e.name === 'Profile') {
      const p = get(e, String(e.id))
      if (data.startTime != null) p.t = Number(data.startTime)
    } else if (e.name === 'ProfileChunk' && data.cpuProfile) {
      add(get(e, String(e.id)), data.cpuProfile, data.timeDeltas || data.cpuProfile.timeDeltas || [])
    } else if (e.name === 'CpuProfile' && data.cpuProfile) {
      const p = get(e, `CpuProfile ${i}`)
      if (data.cpuProfile.startTime != null) p.t = Number(data.cpuProfile.startTime)
      add(p, data.cpuProfile, data.cpuProfile.timeDeltas || [])
    }
  })
  const threads = new Map<string, {frames: string[]; dummy: boolean[]; t: number}[]>()
  for (const p of order) {
    for (const h of p.hits) {
      if (!p.nodes.has(h.node)) continue // profdiff leaves it out, with a warning
      const frames: string[] = [], dummy: boolean[] = []
      for (let id: number | undefined = h.node; id !== undefined && p.nodes.has(id); id = p.parent.get(id)) {
        const cf = p.nodes.get(id).callFrame || {}
        if (cf.functionName === '(root)') continue
        frames.push(cf.functionName || '(anonymous)')
        dummy.push(cf.url === 'native dummy.js')
      }
      if (!threads.has(p.thread)) threads.set(p.thread, [])
      threads.get(p.thread)!.push({frames: frames.reverse(), dummy: dummy.reverse(), t: h.ts})
    }
  }
  return [...threads.values()].map(ts => weigh(ts, (t, sorted) => (sorted.length > 1 ? t - sorted[sorted.length - 2] : 0)))
}
