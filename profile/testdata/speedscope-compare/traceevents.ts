// speedscope's "Trace Event Format" importer (src/import/trace-event.ts)
// reads a trace's duration events (B/E and X) and its stackFrames samples.
// It names a duration event's frame by the event's name and, when the
// event has args, their JSON ("gamma {"detail":"foobar"}", getEventId);
// profdiff names it by the event's name. The comparison names speedscope's
// frames as profdiff does, so that their times are compared.
import {Frame} from './src/lib/profile'
import {stackOf, weigh} from './chrome'

export function isTraceEventImporter(importer: string): boolean {
  return importer.includes('Importing as Trace Event Format profile')
}

// traceEventName is the event's name of a frame speedscope named
// `${name} ${JSON.stringify(args)}`: the name before the first " {" from
// which the rest is a JSON object.
export function traceEventName(f: Frame): string {
  for (let i = f.name.indexOf(' {'); i >= 0; i = f.name.indexOf(' {', i + 1)) {
    try {
      const args = JSON.parse(f.name.slice(i + 1))
      if (args !== null && typeof args === 'object' && !Array.isArray(args)) return f.name.slice(0, i)
    } catch (e) {}
  }
  return f.name
}

// traceEventSamples applies speedscope's convention for a trace's
// stackFrames samples (sampleListToProfile) to profdiff's stacks: a
// sample weighs the time to its thread's next one and the last one
// nothing, where profdiff weighs the last one the interval before it. It
// reads the samples as profile/chrometrace does (per pid and tid, in time
// order) and takes each thread's last sample off its stack. It returns
// null for a trace without such samples.
export function traceEventSamples(json: any, pd: Map<string, number>): {pd: Map<string, number>; notes: string[]} | null {
  if (Array.isArray(json) || !Array.isArray(json.samples) || json.samples.length === 0 || !json.stackFrames) return null
  const frames = (sf: any): string[] => {
    const out: string[] = []
    for (let id = sf; id != null && json.stackFrames[id]; id = json.stackFrames[id].parent) {
      out.push(json.stackFrames[id].name || '(unnamed)')
      if (out.length > 1 << 16) throw new Error(`stackFrames ${sf}: a cycle`)
    }
    return out.reverse()
  }
  const threads = new Map<string, {frames: string[]; dummy: boolean[]; t: number}[]>()
  for (const s of json.samples) {
    const k = `${s.pid}\u0000${s.tid}`
    if (!threads.has(k)) threads.set(k, [])
    const f = frames(s.sf)
    threads.get(k)!.push({frames: f, dummy: f.map(() => false), t: Number(s.ts)})
  }
  const weighed = [...threads.values()].map(ts => weigh(ts, (t, sorted) => (sorted.length > 1 ? t - sorted[sorted.length - 2] : 0)))
  const out = new Map(pd)
  const total = [...pd.values()].reduce((a, b) => a + b, 0)
  let lastNanos = 0, backwards = 0
  for (const th of weighed) {
    const last = th.ticks[th.ticks.length - 1]
    const v = out.get(stackOf(last.frames))
    if (v === undefined || v < last.nanos) throw new Error(`profdiff has ${v} ns at ${stackOf(last.frames)}, less than its last sample's ${last.nanos} ns`)
    if (v === last.nanos) out.delete(stackOf(last.frames))
    else out.set(stackOf(last.frames), v - last.nanos)
    lastNanos += last.nanos
    backwards += th.backwards
  }
  const notes = [`last sample of ${weighed.length} thread${weighed.length === 1 ? '' : 's'} taken off (${((lastNanos / total) * 100).toFixed(3)}%)`]
  if (backwards > 0) notes.push(`${backwards} samples out of time order (speedscope weighs them by file order, profdiff sorts them)`)
  return {pd: out, notes}
}
