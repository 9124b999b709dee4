#!/usr/bin/env node
// The files below a per-file coverage threshold in two vitest coverage runs (the unpatched and the patched
// checkout), read from vitest's `ERROR: Coverage for <metric> (<pct>%) does not meet ... threshold (<pct>%) for
// <file>` lines. A file below a threshold only on the patched run fails the comparison when the series can affect it:
// it lies in a package the series touches or one depending on them (dependents.mjs's JSON). Elsewhere the series
// changes no code the file's tests run, and DSH's own coverage of some such files varies from run to run (timing-
// dependent UI tests), so it is reported, not failed. Without the JSON every file counts. Exit 0 when nothing counted is new.
// Usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log> [dependents.json]
//        (pass /dev/null as the unpatched log to require no file below a threshold at all)
import { readFileSync } from 'node:fs'

const [baseLog, patchedLog, dependentsJson] = process.argv.slice(2)
if (patchedLog === undefined) {
  console.error('usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log> [dependents.json]')
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

/** Whether the series can affect a file: every file without a dependents list, else one under a listed package. */
const affected = (() => {
  if (dependentsJson === undefined) return () => true
  const { touched, dependents } = JSON.parse(readFileSync(dependentsJson, 'utf8'))
  const dirs = [...touched, ...dependents].map(dir => `${dir}/`)
  return key => dirs.some(dir => key.startsWith(dir) || key.includes(`/${dir}`))
})()

const base = misses(baseLog)
const patched = misses(patchedLog)
const added = [...patched].filter(([key]) => !base.has(key))
const counted = added.filter(([key]) => affected(key))
const elsewhere = added.filter(([key]) => !affected(key))
const mended = [...base].filter(([key]) => !patched.has(key))
console.log(`below a threshold: unpatched ${base.size} (file, metric) pairs, patched ${patched.size}; ${counted.length} new where the series can affect them, ${elsewhere.length} new elsewhere, ${mended.length} only unpatched`)
for (const [key, pct] of counted) console.log(`  new: ${key} ${pct}%`)
for (const [key, pct] of elsewhere) console.log(`  new outside the series' packages and their dependents (reported, not failed): ${key} ${pct}%`)
for (const [key, pct] of mended) console.log(`  only unpatched: ${key} ${base.get(key)}%`)
for (const [key, pct] of [...patched].filter(([key]) => base.has(key))) console.log(`  below on both: ${key} ${pct}% (unpatched ${base.get(key)}%)`)
process.exit(counted.length === 0 ? 0 : 1)
