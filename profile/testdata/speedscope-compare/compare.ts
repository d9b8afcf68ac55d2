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
import {CallTreeNode, Profile} from './src/lib/profile'

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
      for (const p of compared(group.profiles)) folded(p.getGroupedCalltreeRoot(), ss)
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
