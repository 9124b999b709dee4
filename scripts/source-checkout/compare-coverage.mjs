#!/usr/bin/env node
// The files below a per-file coverage threshold in two vitest coverage runs (the unpatched and the patched
// checkout), read from vitest's `ERROR: Coverage for <metric> (<pct>%) does not meet ... threshold (<pct>%) for
// <file>` lines. A (file, metric) pair below a threshold only on the patched run counts when the series can affect the
// file: it lies in a package the series touches or one depending on them (dependents.mjs's JSON); elsewhere it is
// reported, not failed. Without the JSON every file counts. Exit 0 when nothing counts.
// A counted pair in a file the series changes fails (exit 1). DSH's own coverage of other files can depend on what else
// runs, so the rest are written to --flagged as `<package> <file> <metric>` rows and the exit is 3: source-checkout.sh
// then runs each flagged package's own suites, instrumented for that package only, on both checkouts, and the
// --remeasured form fails a pair whose patched figure there is lower than the unpatched one, or that either re-run did
// not measure (no row for the file in its coverage table).
// Usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log> [dependents.json [--flagged <out>]]
//        compare-coverage.mjs --remeasured <flagged> <unpatched re-run log> <patched re-run log>
//        (pass /dev/null as the unpatched log to require no file below a threshold at all)
import { readFileSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'

const USAGE = 'usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log> [dependents.json [--flagged <out>]]\n'
  + '       compare-coverage.mjs --remeasured <flagged> <unpatched re-run log> <patched re-run log>'
const args = process.argv.slice(2)
if (args[0] === '--remeasured' ? args.length !== 4 : args.length < 2 || (args.length > 3 && (args.length !== 5 || args[3] !== '--flagged'))) {
  console.error(USAGE)
  process.exit(2)
}
/** vitest colours its output. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g')
const LINE = /ERROR: Coverage for (\w+) \(([\d.]+)%\) does not meet (?:global )?threshold \(([\d.]+)%\) for (\S+)/

const lines = log => readFileSync(log, 'utf8').replace(ANSI, '').split('\n')

/** Map of `<file> <metric>` -> measured percentage. */
function misses(log) {
  const found = new Map()
  for (const line of lines(log)) {
    const match = LINE.exec(line)
    if (match !== null) found.set(`${match[4]} ${match[1]}`, match[2])
  }
  return found
}

if (args[0] === '--remeasured') {
  const [, flagged, baseRerun, patchedRerun] = args
  /** A re-run's figure for a pair: its threshold line's, 100 when its coverage table has the file's row, else undefined. */
  const figures = log => {
    const below = misses(log)
    const rows = new Set(lines(log).map(line => /^\s*([^\s|]+)\s*\|/.exec(line)?.[1]).filter(Boolean))
    return (file, metric) => {
      const pct = below.get(`${file} ${metric}`)
      if (pct !== undefined) return Number(pct)
      return rows.has(basename(file)) ? 100 : undefined
    }
  }
  const base = figures(baseRerun)
  const patched = figures(patchedRerun)
  const rows = readFileSync(flagged, 'utf8').split('\n').filter(Boolean).map(row => row.split(' '))
  let failed = 0
  console.log(`re-measured with their packages' own suites: ${rows.length} (file, metric) pairs`)
  for (const [dir, file, metric] of rows) {
    const [was, is] = [base(file, metric), patched(file, metric)]
    const verdict = was === undefined || is === undefined
      ? `FAIL, not measured on the ${was === undefined ? 'unpatched' : 'patched'} re-run`
      : is < was ? 'FAIL, lower on the patched re-run'
        : is < 100 ? 'as low on the unpatched re-run: not the series\' (reported, not failed)'
          : 'not below on the patched re-run (reported, not failed)'
    if (verdict.startsWith('FAIL')) failed++
    console.log(`  ${verdict}: ${file} ${metric} (${dir}): unpatched ${was ?? '-'}%, patched ${is ?? '-'}%`)
  }
  console.log(`${failed} failed`)
  process.exit(failed === 0 ? 0 : 1)
}

const [baseLog, patchedLog, dependentsJson, , flaggedOut] = args
const series = dependentsJson === undefined ? undefined : JSON.parse(readFileSync(dependentsJson, 'utf8'))
/** The package of the series' (touched or dependent) that holds a file, or undefined; without a list, every file's. */
const packageOf = (() => {
  if (series === undefined) return () => '.'
  const dirs = [...series.touched, ...series.dependents].sort((a, b) => b.length - a.length)
  return key => dirs.find(dir => key.startsWith(`${dir}/`) || key.includes(`/${dir}/`))
})()
const changed = new Set(series?.files ?? [])
const fileOf = key => key.slice(0, key.lastIndexOf(' '))

const base = misses(baseLog)
const patched = misses(patchedLog)
const added = [...patched].filter(([key]) => !base.has(key))
const counted = added.filter(([key]) => packageOf(key) !== undefined)
const elsewhere = added.filter(([key]) => packageOf(key) === undefined)
const own = counted.filter(([key]) => series === undefined || changed.has(fileOf(key)))
const remeasure = counted.filter(entry => !own.includes(entry))
const mended = [...base].filter(([key]) => !patched.has(key))
console.log(`below a threshold: unpatched ${base.size} (file, metric) pairs, patched ${patched.size}; ${counted.length} new where the series can affect them (${own.length} in files it changes), ${elsewhere.length} new elsewhere, ${mended.length} only unpatched`)
for (const [key, pct] of own) console.log(`  new: ${key} ${pct}%`)
for (const [key, pct] of remeasure) console.log(`  new, to re-measure: ${key} ${pct}%`)
for (const [key, pct] of elsewhere) console.log(`  new outside the series' packages and their dependents (reported, not failed): ${key} ${pct}%`)
for (const [key] of mended) console.log(`  only unpatched: ${key} ${base.get(key)}%`)
for (const [key, pct] of [...patched].filter(([key]) => base.has(key))) console.log(`  below on both: ${key} ${pct}% (unpatched ${base.get(key)}%)`)
if (flaggedOut !== undefined) writeFileSync(flaggedOut, remeasure.map(([key]) => `${packageOf(key)} ${key}\n`).join(''))
process.exit(own.length > 0 || (remeasure.length > 0 && flaggedOut === undefined) ? 1 : remeasure.length > 0 ? 3 : 0)
