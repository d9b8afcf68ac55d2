// Reads each profile with speedscope's own importer (importProfilesFromArrayBuffer,
// which picks the importer as the web app does) and with a profdiff binary
// (`profdiff top --format folded`), and compares the weight of every stack
// as a share of each reader's total. Prints one line per file; exits 1 when
// a file differs by more than the tolerance, or one reader cannot read it.
//
// Bundled by run.sh with speedscope's src/ beside it; see README.md.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import {execFileSync} from 'child_process'
import {importProfilesFromArrayBuffer} from './src/import/index'
import {CallTreeNode, Frame, Profile} from './src/lib/profile'
import {adjustSpeedscope, chromeConventions, chromeKind, chromeName} from './chrome'
import {isTraceEventImporter, traceEventName, traceEventSamples} from './traceevents'
import {firefoxConventions, firefoxName, isFirefoxImporter} from './firefox'
import {readPprof} from './pprof'

const TOLERANCE = 0.005 // of each file's total

// speedscope's importers log which importer they chose on stdout.
const importers: string[] = []
console.log = (...args: any[]) => importers.push(args.join(' '))

// folded sums speedscope's grouped call tree into stacks: each node's self
// weight under its root-to-node path, every profile of the file merged (as
// profdiff merges them).
// name, when given, turns speedscope's frame into profdiff's name for it.
function folded(root: CallTreeNode, out: Map<string, number>, name = (f: Frame) => f.name) {
  const walk = (node: CallTreeNode, stack: string[]) => {
    const self = node.getSelfWeight()
    if (self !== 0 && stack.length > 0) {
      const key = stack.join(';')
      out.set(key, (out.get(key) || 0) + self)
    }
    // profdiff names a blank frame (`a;;b`, `a; 3`) [blank]; speedscope
    // keeps it as written ("", " ").
    for (const c of node.children) {
      const n = name(c.frame)
      walk(c, [...stack, n.trim() === '' ? '[blank]' : n])
    }
  }
  walk(root, [])
}

// compared picks the profiles of a file that profdiff's output holds. The
// callgrind importer makes one profile per event (Ir, cache misses, or
// Xdebug's time and memory), which must not be summed: profdiff's folded
// output is its default sample type, the first event, so only the first
// profile is compared.
function compared(profiles: Profile[]): Profile[] {
  if (importers.some(i => i.includes('Callgrind'))) return profiles.slice(0, 1)
  return profiles
}

// parseFolded reads profdiff's folded output: `a;b;c 42` per line.
function parseFolded(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    const i = line.lastIndexOf(' ')
    if (i <= 0) continue
    const key = line.slice(0, i)
    out.set(key, (out.get(key) || 0) + Number(line.slice(i + 1)))
  }
  return out
}

// byImporter adapts the two readers' stacks where speedscope's importer
// has conventions of its own (README.md says why), keyed on the importer's
// log line. (The Firefox importer's, which need more than the folded
// stacks, are firefox.ts.)
const byImporter: [string, (ss: Map<string, number>, pd: Map<string, number>) => [Map<string, number>, Map<string, number>]][] = [
  ['stackprof', stackprofConventions],
]

// stackprofConventions: speedscope puts a GC sample recorded as the lone
// frame "(garbage collection)" (stackprof before 0.2.16) on top of the
// stack of the sample before it; profdiff keeps it as a stack of its own.
function stackprofConventions(ss: Map<string, number>, pd: Map<string, number>): [Map<string, number>, Map<string, number>] {
  const out = new Map<string, number>()
  for (const [k, v] of ss) {
    const key = k.endsWith(';(garbage collection)') ? '(garbage collection)' : k
    out.set(key, (out.get(key) || 0) + v)
  }
  return [out, pd]
}

function total(m: Map<string, number>) {
  let t = 0
  for (const v of m.values()) t += v
  return t
}

// readSpeedscope reads a file's bytes with speedscope's importers: its
// stacks (a Chrome importer's adjusted by chrome.ts) and the importer
// speedscope chose.
async function readSpeedscope(name: string, data: ArrayBuffer) {
  importers.length = 0
  const group = await importProfilesFromArrayBuffer(name, data)
  if (!group) throw new Error('it does not read it')
  const importer = importers.join('; ')
  const kind = chromeKind(importer)
  let ss = new Map<string, number>()
  const name_ = kind ? chromeName(kind) : isTraceEventImporter(importer) ? traceEventName : isFirefoxImporter(importer) ? firefoxName : undefined
  for (const p of compared(group.profiles)) folded(p.getGroupedCalltreeRoot(), ss, name_)
  if (kind) ss = adjustSpeedscope(ss)
  return {ss, importer, kind}
}

// largest returns the largest difference between two readers' stacks, as
// shares of each one's total, and its stack.
function largest(ss: Map<string, number>, pd: Map<string, number>) {
  const ts = total(ss), tp = total(pd)
  let worst = 0, stack = ''
  for (const key of new Set([...ss.keys(), ...pd.keys()])) {
    const d = Math.abs((ss.get(key) || 0) / ts - (pd.get(key) || 0) / tp)
    if (d > worst) [worst, stack] = [d, key]
  }
  return {worst, stack, at: `${(worst * 100).toFixed(3)}%${worst > 0 ? ` at ${stack.slice(-200)}` : ''}`}
}

async function main() {
  const args = process.argv.slice(2)
  const profdiff = args.shift()
  if (!profdiff || args.length === 0) {
    process.stderr.write('usage: node compare.js PROFDIFF FILE... (run.sh builds it)\n')
    process.exit(2)
  }
  let failed = 0
  for (const file of args) {
    const name = path.basename(file)
    const fail = (why: string) => {
      failed++
      process.stdout.write(`FAIL  ${name}: ${why}\n`)
    }
    const buf = fs.readFileSync(file)
    let read
    try {
      read = await readSpeedscope(name, buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer)
    } catch (e) {
      fail(`speedscope: ${e}`)
      continue
    }
    let {ss, importer, kind} = read
    let pd: Map<string, number>
    try {
      pd = parseFolded(execFileSync(profdiff, ['top', '--format', 'folded', file], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30}))
    } catch (e: any) {
      fail(`profdiff: ${String(e.stderr || e).trim().split('\n')[0]}`)
      continue
    }
    // speedscope's Chrome importers: compare under their conventions
    // (chrome.ts), saying on the line what each moved.
    let notes: string[] = []
    if (kind) {
      try {
        ;({ss, pd, notes} = await chromeConventions(kind, {
          json: JSON.parse(buf.toString('utf8')),
          ss,
          pd,
          profdiffJSON: (...flags: string[]) => JSON.parse(execFileSync(profdiff, ['top', '--format', 'json', ...flags, file], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 30})),
          speedscope: async (data: ArrayBuffer) => (await readSpeedscope(name, data)).ss,
          largest: (ss, pd) => largest(ss, pd).at,
        }))
      } catch (e) {
        fail(`Chrome conventions: ${e}`)
        continue
      }
    }
    if (isTraceEventImporter(importer)) {
      try {
        const adjusted = traceEventSamples(JSON.parse(buf.toString('utf8')), pd)
        if (adjusted) ({pd, notes} = adjusted)
      } catch (e) {
        // A file cut off mid-array is no JSON; it holds no stackFrames samples.
        if (!(e instanceof SyntaxError)) {
          fail(`trace event samples: ${e}`)
          continue
        }
      }
    }
    if (isFirefoxImporter(importer)) {
      // The profile profdiff's reader made, with each frame's file and
      // each sample's thread (`profdiff symbolize` writes it as pprof).
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compare-'))
      try {
        const out = path.join(dir, 'profile.pb.gz')
        execFileSync(profdiff, ['symbolize', file, '-o', out], {stdio: ['ignore', 'ignore', 'pipe']})
        const ff = firefoxConventions(JSON.parse(buf.toString('utf8')), readPprof(fs.readFileSync(out)), pd)
        const ts = total(ss), tp = total(ff.pd) / 1e6
        if (Math.abs(ts - tp) > 1e-6 * ts) throw new Error(`the totals differ: ${ts} ms (speedscope), ${tp} ms (profdiff, by time)`)
        pd = ff.pd
        notes = [...ff.notes, `totals agree`, `${largest(ss, ff.byInterval).at} weighing each sample the interval`]
      } catch (e: any) {
        fail(`Firefox conventions: ${String(e.stderr || e).trim().split('\n')[0]}`)
        continue
      } finally {
        fs.rmSync(dir, {recursive: true, force: true})
      }
    }
    for (const [importer, adapt] of byImporter) {
      if (importers.some(l => l.includes(importer))) [ss, pd] = adapt(ss, pd)
    }
    const ts = total(ss), tp = total(pd)
    if (ts <= 0 || tp <= 0) {
      fail(`total weight ${ts} (speedscope), ${tp} (profdiff)`)
      continue
    }
    // COMPARE_STACKS=1 lists every stack whose weights differ (speedscope's
    // scaled to profdiff's total), to find where a file differs.
    if (process.env.COMPARE_STACKS) {
      const ts = total(ss), tp = total(pd)
      for (const k of [...new Set([...ss.keys(), ...pd.keys()])].sort()) {
        const s = ((ss.get(k) || 0) / ts) * tp, p = pd.get(k) || 0
        if (Math.abs(s - p) >= 0.5) process.stdout.write(`      ${k}: speedscope ${Math.round(s)}, profdiff ${p}\n`)
      }
    }
    const {worst, at} = largest(ss, pd)
    const line = `${ss.size} stacks (speedscope, ${importer}), ${pd.size} (profdiff); ${notes.length > 0 ? `${notes.join('; ')}; ` : ''}largest difference ${at} of the total`
    if (worst > TOLERANCE) fail(line)
    else process.stdout.write(`ok    ${name}: ${line}\n`)
  }
  process.exit(failed > 0 ? 1 : 0)
}

main()
