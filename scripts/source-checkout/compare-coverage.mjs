#!/usr/bin/env node
// The files below a per-file coverage threshold in two vitest coverage runs (the unpatched and the patched
// checkout), read from vitest's `ERROR: Coverage for <metric> (<pct>%) does not meet ... threshold (<pct>%) for
// <file>` lines. A (file, metric) pair below a threshold on the patched run, and not below it or higher on the
// unpatched run, counts when the series can affect the file: it lies in a package the series touches or one depending
// on them (dependents.mjs's JSON); elsewhere it is reported, not failed. Without the JSON every file counts. Exit 0 when
// nothing counts. A counted pair in a file the series changes fails (exit 1). DSH's own coverage of other files can
// depend on what else runs, so the rest are written to --flagged as `<package> <file> <metric>` rows and the exit is 3:
// source-checkout.sh then runs each flagged package's own suites, instrumented for that package only, on both
// checkouts, with vitest's json-summary report, and the --remeasured form fails a pair whose patched figure there is
// lower than the unpatched one, or that either report lacks. What this cannot see: a file whose coverage the series
// lowers only through another package's tests measures the same in its own package's suites on both copies.
// Usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log> [dependents.json [--flagged <out>]]
//        compare-coverage.mjs --remeasured <flagged> <unpatched coverage-summary.json> <patched coverage-summary.json>
//        (pass /dev/null as the unpatched log to require no file below a threshold at all)
import { readFileSync, writeFileSync } from 'node:fs'

const USAGE = 'usage: compare-coverage.mjs <unpatched tests.log> <patched tests.log> [dependents.json [--flagged <out>]]\n'
  + '       compare-coverage.mjs --remeasured <flagged> <unpatched coverage-summary.json> <patched coverage-summary.json>'
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
  const [, flagged, baseSummary, patchedSummary] = args
  /** A json-summary report's figure for a pair (its keys are absolute paths), or undefined when it has no such file. */
  const figures = path => {
    const summary = JSON.parse(readFileSync(path, 'utf8'))
    const keys = Object.keys(summary)
    return (file, metric) => {
      const key = keys.find(k => k.endsWith(`/${file}`))
      return key === undefined ? undefined : summary[key][metric]?.pct
    }
  }
  const base = figures(baseSummary)
  const patched = figures(patchedSummary)
  const rows = readFileSync(flagged, 'utf8').split('\n').filter(Boolean).map(row => row.split(' '))
  let failed = 0
  console.log(`re-measured with their packages' own suites: ${rows.length} (file, metric) pairs in ${new Set(rows.map(([dir]) => dir)).size} packages`)
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
  return key => dirs.find(dir => key.startsWith(`${dir}/`))
})()
const changed = new Set(series?.files ?? [])
const fileOf = key => key.slice(0, key.lastIndexOf(' '))

const base = misses(baseLog)
const patched = misses(patchedLog)
// New below the threshold, or lower than it was (a figure already below on the unpatched run).
const added = [...patched].filter(([key, pct]) => !base.has(key) || Number(pct) < Number(base.get(key)))
const counted = added.filter(([key]) => packageOf(key) !== undefined)
const elsewhere = added.filter(([key]) => packageOf(key) === undefined)
const own = counted.filter(([key]) => series === undefined || changed.has(fileOf(key)))
const remeasure = counted.filter(entry => !own.includes(entry))
const mended = [...base].filter(([key]) => !patched.has(key))
console.log(`below a threshold: unpatched ${base.size} (file, metric) pairs, patched ${patched.size}; ${counted.length} new or lower where the series can affect them (${own.length} in files it changes), ${elsewhere.length} elsewhere, ${mended.length} only unpatched`)
for (const [key, pct] of own) console.log(`  new: ${key} ${pct}%`)
for (const [key, pct] of remeasure) console.log(`  new, to re-measure: ${key} ${pct}%`)
for (const [key, pct] of elsewhere) console.log(`  new outside the series' packages and their dependents (reported, not failed): ${key} ${pct}%`)
for (const [key] of mended) console.log(`  only unpatched: ${key} ${base.get(key)}%`)
for (const [key, pct] of [...patched].filter(([key, pct]) => base.has(key) && Number(pct) >= Number(base.get(key)))) {
  console.log(`  below on both, not lower patched: ${key} ${pct}% (unpatched ${base.get(key)}%)`)
}
if (flaggedOut !== undefined) writeFileSync(flaggedOut, remeasure.map(([key]) => `${packageOf(key)} ${key}\n`).join(''))
process.exit(own.length > 0 || (remeasure.length > 0 && flaggedOut === undefined) ? 1 : remeasure.length > 0 ? 3 : 0)
