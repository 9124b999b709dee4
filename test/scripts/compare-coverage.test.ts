/**
 * scripts/source-checkout/compare-coverage.mjs: a file newly below a per-file coverage threshold counts where the series
 * can affect it (a package it touches or a dependent) and is only reported elsewhere; a counted one fails at once in a
 * file the series changes, else when its package's own suites, re-run on both copies, measure it lower patched.
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../scripts/source-checkout/compare-coverage.mjs', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'compare-coverage-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const miss = (file: string, pct: number): string => `ERROR: Coverage for lines (${pct}%) does not meet threshold (100%) for ${file}`
function write(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' })

const unpatched = write('unpatched.log', `${miss('packages/core/session/src/old.ts', 98)}\n`)
const dependents = write('dependents.json', JSON.stringify({ touched: ['packages/core/session'], dependents: ['packages/core/agent-loop'] }))

describe('compare-coverage.mjs', () => {
  it('reports a new miss outside the series\' packages and their dependents without failing', () => {
    const patched = write('ui.log', `${miss('packages/core/session/src/old.ts', 98)}\n${miss('packages/client/ui-subagent/src/client/SubagentHeaderLineage.tsx', 99.22)}\n`)
    const result = run(unpatched, patched, dependents)
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('0 new or lower where the series can affect them (0 in files it changes), 1 elsewhere')
    expect(result.stdout).toContain('reported, not failed): packages/client/ui-subagent/src/client/SubagentHeaderLineage.tsx lines 99.22%')
  })

  it('fails on a new miss in a dependent package when nothing is to re-measure it, and on any without the dependents list', () => {
    const patched = write('loop.log', `${miss('packages/core/agent-loop/src/agent.ts', 97.5)}\n`)
    const result = run(unpatched, patched, dependents)
    expect(result.status).toBe(1)
    expect(result.stdout).toContain('new, to re-measure: packages/core/agent-loop/src/agent.ts lines 97.5%')
    const elsewhere = write('ui-only.log', `${miss('packages/client/ui-subagent/src/client/SubagentHeaderLineage.tsx', 99.22)}\n`)
    expect(run(unpatched, elsewhere).status).toBe(1)
  })

  // ui-subagent depends on the series' token-meter (a type-only import), so its file counts, and only the re-measure
  // tells DSH's own coverage (that file is below in its own package's suites on unpatched DSH) from a regression.
  const graph = write('graph.json', JSON.stringify({
    touched: ['packages/llm/token-meter', 'packages/core/session'],
    dependents: ['packages/client/ui-subagent', 'packages/client/ui'],
    files: ['packages/core/session/src/index.ts'],
  }))
  const lineage = 'packages/client/ui-subagent/src/client/SubagentHeaderLineage.tsx'

  it('flags a counted pair in a file the series does not change for the re-measure (exit 3)', () => {
    const flagged = join(dir, 'flagged.txt')
    const result = run(unpatched, write('lineage.log', `${miss(lineage, 99.22)}\n`), graph, '--flagged', flagged)
    expect(result.status).toBe(3)
    expect(result.stdout).toContain(`new, to re-measure: ${lineage} lines 99.22%`)
    expect(readFileSync(flagged, 'utf8')).toBe(`packages/client/ui-subagent ${lineage} lines\n`)
  })

  it('fails a counted pair in a file the series changes without a re-measure', () => {
    const flagged = join(dir, 'flagged-own.txt')
    const own = write('own.log', `${miss('packages/core/session/src/index.ts', 99)}\n${miss(lineage, 99.22)}\n`)
    const result = run(unpatched, own, graph, '--flagged', flagged)
    expect(result.status).toBe(1)
    expect(result.stdout).toContain('(1 in files it changes)')
    expect(result.stdout).toContain('new: packages/core/session/src/index.ts lines 99%')
    expect(readFileSync(flagged, 'utf8')).toBe(`packages/client/ui-subagent ${lineage} lines\n`)
  })

  it('counts a pair already below unpatched when it is lower patched', () => {
    const base = write('lineage-base.log', `${miss(lineage, 99.22)}\n`)
    const same = run(base, write('lineage-same.log', `${miss(lineage, 99.22)}\n`), graph, '--flagged', join(dir, 'f-same.txt'))
    expect(same.status).toBe(0)
    expect(same.stdout).toContain(`below on both, not lower patched: ${lineage} lines 99.22% (unpatched 99.22%)`)
    const ownBase = write('own-base.log', `${miss('packages/core/session/src/index.ts', 99)}\n`)
    const lower = run(ownBase, write('own-lower.log', `${miss('packages/core/session/src/index.ts', 40)}\n`), graph, '--flagged', join(dir, 'f-lower.txt'))
    expect(lower.status).toBe(1)
    expect(lower.stdout).toContain('new: packages/core/session/src/index.ts lines 40%')
  })

  // vitest's json-summary report, as `--coverage.reporter=json-summary` writes it: absolute paths, a `pct` per metric.
  const summary = (name: string, lines?: number): string => write(name, JSON.stringify({
    total: { lines: { pct: 99 } },
    ...lines === undefined ? {} : { [`/work/copy/${lineage}`]: { lines: { total: 258, covered: 256, skipped: 0, pct: lines } } },
    '/work/copy/packages/client/ui-subagent/src/client/index.ts': { lines: { total: 16, covered: 16, skipped: 0, pct: 100 } },
  }))

  it('judges a re-measured pair by its figures on both copies, and fails one either re-run did not measure', () => {
    const flagged = write('flagged-rows.txt', `packages/client/ui-subagent ${lineage} lines\n`)
    const equal = run('--remeasured', flagged, summary('u1.json', 99.22), summary('p1.json', 99.22))
    expect(equal.status).toBe(0)
    expect(equal.stdout).toContain(`as low on the unpatched re-run: not the series' (reported, not failed): ${lineage} lines (packages/client/ui-subagent): unpatched 99.22%, patched 99.22%`)
    const lower = run('--remeasured', flagged, summary('u2.json', 99.22), summary('p2.json', 98))
    expect(lower.status).toBe(1)
    expect(lower.stdout).toContain('FAIL, lower on the patched re-run')
    const belowOnlyPatched = run('--remeasured', flagged, summary('u3.json', 100), summary('p3.json', 98))
    expect(belowOnlyPatched.status).toBe(1)
    expect(belowOnlyPatched.stdout).toContain('unpatched 100%, patched 98%')
    const full = run('--remeasured', flagged, summary('u4.json', 99.22), summary('p4.json', 100))
    expect(full.status).toBe(0)
    expect(full.stdout).toContain('not below on the patched re-run (reported, not failed)')
    const missing = run('--remeasured', flagged, summary('u5.json'), summary('p5.json', 99.22))
    expect(missing.status).toBe(1)
    expect(missing.stdout).toContain('FAIL, not measured on the unpatched re-run')
  })

  it('refuses a malformed command line', () => {
    expect(run('only-one.log').status).toBe(2)
    expect(run(unpatched, unpatched, graph, '--flag', 'x').status).toBe(2)
    expect(run('--remeasured', 'flagged').status).toBe(2)
  })
})
