#!/usr/bin/env node
// The files below a per-file coverage threshold in two vitest coverage runs (the unpatched and the patched
// checkout), read from vitest's `ERROR: Coverage for <metric> (<pct>%) does not meet ... threshold (<pct>%) for
// <file>` lines. Exit 0 when every file below a threshold on the patched run is below that threshold on the unpatched
// run too (pass /dev/null as the unpatched log to require none).
// Usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log>
import { readFileSync } from 'node:fs'

const [baseLog, patchedLog] = process.argv.slice(2)
if (patchedLog === undefined) {
  console.error('usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log>')
  process.exit(2)
}
/** vitest colours its output. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g')
const LINE = /ERROR: Coverage for (\w+) \(([\d.]+)%\) does not meet (?:global )?threshold \(([\d.]+)%\) for (\S+)/

/** Map of `<file> <metric>` -> measured percentage. */
function misses(log) {
  const found = new Map()
  for (const line of readFileSync(log, 'utf8').replace(ANSI, '').split('\n')) {
    const match = LINE.exec(line)
    if (match !== null) found.set(`${match[4]} ${match[1]}`, match[2])
  }
  return found
}

const base = misses(baseLog)
const patched = misses(patchedLog)
const added = [...patched].filter(([key]) => !base.has(key))
const mended = [...base].filter(([key]) => !patched.has(key))
console.log(`below a threshold: unpatched ${base.size} (file, metric) pairs, patched ${patched.size}; ${added.length} new, ${mended.length} only unpatched`)
for (const [key, pct] of added) console.log(`  new: ${key} ${pct}%`)
for (const [key, pct] of [...patched].filter(([key]) => base.has(key))) console.log(`  below on both: ${key} ${pct}% (unpatched ${base.get(key)}%)`)
process.exit(added.length === 0 ? 0 : 1)
