#!/usr/bin/env node
// Side-by-side per-package results of the vitest JSON reports of two checkouts (unpatched and patched; each side's
// reports comma-separated, merged), grouped by the dependents' packages each test file belongs to, every other file
// in one row. A test is identified by its checkout-relative file and full name.
// Exit 0 when the patched run has no failure the unpatched run lacks, loses no test, and every test it adds passes.
// Usage: compare-tests.mjs <dependents.json> <unpatched-root> <unpatched.json>[,...] <patched-root> <patched.json>[,...]
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

const [depsFile, baseRoot, baseFiles, patchedRoot, patchedFiles] = process.argv.slice(2)
if (patchedFiles === undefined) {
  console.error('usage: compare-tests.mjs <dependents.json> <unpatched-root> <unpatched.json>[,...] <patched-root> <patched.json>[,...]')
  process.exit(2)
}
const dirs = JSON.parse(readFileSync(depsFile, 'utf8')).dependents.sort((a, b) => b.length - a.length)

/** Map of test id -> { pkg, status } ('passed' | 'failed' | 'skipped'); a file that failed to run is one failed id. */
function load(files, root) {
  const tests = new Map()
  for (const result of files.split(',').flatMap(file => JSON.parse(readFileSync(file, 'utf8')).testResults)) {
    const path = relative(root, result.name)
    const pkg = dirs.find(dir => path.startsWith(`${dir}/`)) ?? '(every other package)'
    if (result.assertionResults.length === 0 && result.status === 'failed') {
      tests.set(`${path} > (file)`, { pkg, status: 'failed' })
      continue
    }
    for (const test of result.assertionResults) {
      const status = test.status === 'passed' ? 'passed' : test.status === 'failed' ? 'failed' : 'skipped'
      tests.set(`${path} > ${test.fullName}`, { pkg, status })
    }
  }
  return tests
}

const base = load(baseFiles, baseRoot)
const patched = load(patchedFiles, patchedRoot)
const count = (tests, pkg, status) => [...tests.values()].filter(t => t.pkg === pkg && t.status === status).length
const packages = [...new Set([...base.values(), ...patched.values()].map(t => t.pkg))].sort()

const newFailures = [...patched].filter(([id, t]) => t.status === 'failed' && base.get(id)?.status !== 'failed')
const added = [...patched].filter(([id]) => !base.has(id))
const lost = [...base].filter(([id]) => !patched.has(id))
const addedFailing = added.filter(([, t]) => t.status !== 'passed')

const rows = packages.map(pkg => {
  const b = [count(base, pkg, 'passed'), count(base, pkg, 'failed'), count(base, pkg, 'skipped')]
  const p = [count(patched, pkg, 'passed'), count(patched, pkg, 'failed'), count(patched, pkg, 'skipped')]
  const news = added.filter(([, t]) => t.pkg === pkg).length
  const bad = newFailures.some(([, t]) => t.pkg === pkg) || lost.some(([, t]) => t.pkg === pkg)
  return { pkg, b, p, news, verdict: bad ? 'NEW FAILURE' : news > 0 ? `+${news} new` : 'same' }
})
const width = Math.max(...rows.map(r => r.pkg.length), 7)
const cell = ([pass, fail, skip]) => `${String(pass).padStart(5)} ${String(fail).padStart(4)} ${String(skip).padStart(4)}`
console.log(`${'package'.padEnd(width)}  unpatched: pass fail skip | patched: pass fail skip | verdict`)
for (const r of rows) console.log(`${r.pkg.padEnd(width)}  ${' '.repeat(6)}${cell(r.b)} | ${' '.repeat(4)}${cell(r.p)} | ${r.verdict}`)
const total = tests => ['passed', 'failed', 'skipped'].map(s => [...tests.values()].filter(t => t.status === s).length)
console.log(`${'TOTAL'.padEnd(width)}  ${' '.repeat(6)}${cell(total(base))} | ${' '.repeat(4)}${cell(total(patched))} |`)
console.log(`\n${packages.length} packages with tests; ${added.length} tests only on the patched checkout (${added.length - addedFailing.length} pass); ${lost.length} tests missing from it; ${newFailures.length} new failures.`)
for (const [id] of newFailures) console.log(`  new failure: ${id}`)
for (const [id, t] of addedFailing) console.log(`  new test not passing (${t.status}): ${id}`)
for (const [id] of lost) console.log(`  missing on the patched checkout: ${id}`)
const preexisting = [...patched].filter(([id, t]) => t.status === 'failed' && base.get(id)?.status === 'failed')
for (const [id] of preexisting) console.log(`  fails on both: ${id}`)
process.exit(newFailures.length === 0 && lost.length === 0 && addedFailing.length === 0 ? 0 : 1)
