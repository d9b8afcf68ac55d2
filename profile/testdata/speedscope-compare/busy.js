// A Node program to record with node --cpu-prof for the comparison (see
// README.md): a busy loop, garbage, timer waits (the event loop idle) and
// synchronous file reads, so that a profile holds every V8 pseudo-frame.
const fs = require('fs')
function busy(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s }
function garbage(n) { const a = []; for (let i = 0; i < n; i++) a.push({i, s: 'x' + i}); return a.length }
function readSync() { for (let i = 0; i < 200; i++) fs.readFileSync(__filename) }
let rounds = 0
function round() {
  busy(2e6); garbage(2e5); readSync()
  if (++rounds < 20) setTimeout(round, 5)
}
round()
