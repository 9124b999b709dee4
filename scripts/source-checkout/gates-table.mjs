#!/usr/bin/env node
// Side-by-side results of DSH's gate runner (`pnpm run check:ci:static` output)
// for one or more checkouts. Prints one row per gate and the runner's summary line per checkout.
// Usage: gates-table.mjs <label>=<gates.log>...
import { readFileSync } from 'node:fs'

const runs = process.argv.slice(2).map(arg => {
  const at = arg.indexOf('=')
  if (at < 1) {
    console.error('usage: gates-table.mjs <label>=<gates.log>...')
    process.exit(2)
  }
  const text = readFileSync(arg.slice(at + 1), 'utf8')
  // A passing gate prints `run-gates: PASS <label> (Ns)`; a failing one a block headed `== FAILED <label> (Ns) ==`.
  const rows = [
    ...[...text.matchAll(/^run-gates: (PASS|SKIP\w*) (.+?)(?: \(([\d.]+)s\))?$/gm)].map(m => [m[2], m[1], m[3]]),
    ...[...text.matchAll(/^== (FAILED|SKIPPED) (.+?)(?: \(([\d.]+)s\))? ==$/gm)].map(m => [m[2], m[1] === 'FAILED' ? 'FAIL' : 'SKIP', m[3]]),
  ]
  const gates = new Map(rows.map(([name, status, seconds]) => [name, `${status}${seconds ? ` ${Math.round(Number(seconds))}s` : ''}`]))
  const summary = text.match(/^run-gates: \d+ passed, \d+ failed, \d+ skipped.*$/m)?.[0] ?? 'run-gates: no summary line (the runner did not finish)'
  return { label: arg.slice(0, at), gates, summary }
})
const names = [...new Set(runs.flatMap(run => [...run.gates.keys()]))].sort()
const width = Math.max(...names.map(n => n.length), 4)
console.log(`${'gate'.padEnd(width)}  ${runs.map(r => r.label.padEnd(12)).join('  ')}`)
for (const name of names) console.log(`${name.padEnd(width)}  ${runs.map(r => (r.gates.get(name) ?? '-').padEnd(12)).join('  ')}`)
for (const run of runs) console.log(`${run.label}: ${run.summary}`)
