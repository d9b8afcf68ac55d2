// Reads each profile with speedscope's own importer (importProfilesFromArrayBuffer,
// which picks the importer as the web app does) and with a profdiff binary
// (`profdiff top --format folded`), and compares the weight of every stack
// as a share of each reader's total. Prints one line per file; exits 1 when
// a file differs by more than the tolerance, or one reader cannot read it.
//
// Bundled by run.sh with speedscope's src/ beside it; see README.md.
import * as fs from 'fs'
import * as path from 'path'
import {execFileSync} from 'child_process'
import {importProfilesFromArrayBuffer} from './src/import/index'
import {CallTreeNode} from './src/lib/profile'

const TOLERANCE = 0.005 // of each file's total

// speedscope's importers log which importer they chose on stdout.
const importers: string[] = []
console.log = (...args: any[]) => importers.push(args.join(' '))

// folded sums speedscope's grouped call tree into stacks: each node's self
// weight under its root-to-node path, every profile of the file merged (as
// profdiff merges them).
function folded(root: CallTreeNode, out: Map<string, number>) {
  const walk = (node: CallTreeNode, stack: string[]) => {
    const self = node.getSelfWeight()
    if (self !== 0 && stack.length > 0) {
      const key = stack.join(';')
      out.set(key, (out.get(key) || 0) + self)
    }
    // profdiff names a blank frame (`a;;b`, `a; 3`) [blank]; speedscope
    // keeps it as written ("", " ").
    for (const c of node.children) walk(c, [...stack, c.frame.name.trim() === '' ? '[blank]' : c.frame.name])
  }
  walk(root, [])
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
// log line.
const byImporter: [string, (ss: Map<string, number>, pd: Map<string, number>) => [Map<string, number>, Map<string, number>]][] = [
  ['stackprof', stackprofConventions],
  ['Firefox', firefoxConventions],
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

// firefoxConventions: speedscope's Firefox importer reads one thread
// (GeckoMain) and only its JavaScript frames, not Firefox's own
// (resource:, self-hosted); profdiff reads every frame. profdiff's stacks
// are compared with those frames dropped: only the frame names
// speedscope shows are kept, and stacks left empty are left out.
function firefoxConventions(ss: Map<string, number>, pd: Map<string, number>): [Map<string, number>, Map<string, number>] {
  const names = new Set<string>()
  for (const k of ss.keys()) for (const f of k.split(';')) names.add(f)
  const out = new Map<string, number>()
  for (const [k, v] of pd) {
    const key = k.split(';').filter(f => names.has(f)).join(';')
    if (key !== '') out.set(key, (out.get(key) || 0) + v)
  }
  return [ss, out]
}

function total(m: Map<string, number>) {
  let t = 0
  for (const v of m.values()) t += v
  return t
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
    importers.length = 0
    const buf = fs.readFileSync(file)
    let ss = new Map<string, number>()
    try {
      const group = await importProfilesFromArrayBuffer(name, buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer)
      if (!group) {
        fail('speedscope does not read it')
        continue
      }
      for (const p of group.profiles) folded(p.getGroupedCalltreeRoot(), ss)
    } catch (e) {
      fail(`speedscope: ${e}`)
      continue
    }
    let pd: Map<string, number>
    try {
      pd = parseFolded(execFileSync(profdiff, ['top', '--format', 'folded', file], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30}))
    } catch (e: any) {
      fail(`profdiff: ${String(e.stderr || e).trim().split('\n')[0]}`)
      continue
    }
    for (const [importer, adapt] of byImporter) {
      if (importers.some(l => l.includes(importer))) [ss, pd] = adapt(ss, pd)
    }
    const ts = total(ss), tp = total(pd)
    if (ts <= 0 || tp <= 0) {
      fail(`total weight ${ts} (speedscope), ${tp} (profdiff)`)
      continue
    }
    let worst = 0, worstStack = ''
    for (const key of new Set([...ss.keys(), ...pd.keys()])) {
      const d = Math.abs((ss.get(key) || 0) / ts - (pd.get(key) || 0) / tp)
      if (d > worst) [worst, worstStack] = [d, key]
    }
    const line = `${ss.size} stacks (speedscope, ${importers.join('; ')}), ${pd.size} (profdiff); largest difference ${(worst * 100).toFixed(3)}% of the total`
    if (worst > TOLERANCE) fail(`${line}, at ${worstStack.slice(-200)}`)
    else process.stdout.write(`ok    ${name}: ${line}\n`)
  }
  process.exit(failed > 0 ? 1 : 0)
}

main()
