/**
 * scripts/source-checkout/compare-coverage.mjs: a file newly below a per-file coverage threshold counts where the series
 * can affect it (a package it touches or a dependent) and is only reported elsewhere; a counted one fails only when the
 * re-measure with its package's own suites finds it below on the patched checkout alone.
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
    expect(result.stdout).toContain('0 new where the series can affect them, 1 new elsewhere')
    expect(result.stdout).toContain('reported, not failed): packages/client/ui-subagent/src/client/SubagentHeaderLineage.tsx lines 99.22%')
  })

  it('fails on a new miss in a dependent package, and on any new miss without the dependents list', () => {
    const patched = write('loop.log', `${miss('packages/core/agent-loop/src/agent.ts', 97.5)}\n`)
    const result = run(unpatched, patched, dependents)
    expect(result.status).toBe(1)
    expect(result.stdout).toContain('new: packages/core/agent-loop/src/agent.ts lines 97.5%')
    const elsewhere = write('ui-only.log', `${miss('packages/client/ui-subagent/src/client/SubagentHeaderLineage.tsx', 99.22)}\n`)
    expect(run(unpatched, elsewhere).status).toBe(1)
  })

  // The real graph: ui-subagent depends on the series' token-meter (a type-only import), so its file counts, and only
  // the re-measure tells DSH's own variance from a regression.
  const graph = write('graph.json', JSON.stringify({
    touched: ['packages/llm/token-meter'],
    dependents: ['packages/client/ui-subagent', 'packages/client/ui'],
  }))
  const lineage = 'packages/client/ui-subagent/src/client/SubagentHeaderLineage.tsx'

  it('writes a counted pair with its package for the re-measure', () => {
    const flagged = join(dir, 'flagged.txt')
    const result = run(unpatched, write('lineage.log', `${miss(lineage, 99.22)}\n`), graph, '--flagged', flagged)
    expect(result.status).toBe(1)
    expect(readFileSync(flagged, 'utf8')).toBe(`packages/client/ui-subagent ${lineage} lines\n`)
  })

  it('reports a re-measured pair below on both checkouts as variance, and fails one below on the patched alone', () => {
    const flagged = write('flagged-rows.txt', `packages/client/ui-subagent ${lineage} lines\n`)
    const both = run('--remeasured', flagged, write('re-unpatched.log', `${miss(lineage, 99.22)}\n`), write('re-patched.log', `${miss(lineage, 99.22)}\n`))
    expect(both.status).toBe(0)
    expect(both.stdout).toContain(`varies (below on the unpatched re-run too: 99.22%; reported, not failed): ${lineage} lines`)
    const clean = write('re-clean.log', '')
    const patchedOnly = run('--remeasured', flagged, clean, write('re-patched-2.log', `${miss(lineage, 98)}\n`))
    expect(patchedOnly.status).toBe(1)
    expect(patchedOnly.stdout).toContain(`new: ${lineage} lines (packages/client/ui-subagent) 98%`)
    const neither = run('--remeasured', flagged, clean, clean)
    expect(neither.status).toBe(0)
    expect(neither.stdout).toContain('not below on the patched re-run (reported, not failed)')
  })

  it('refuses a malformed command line', () => {
    expect(run('only-one.log').status).toBe(2)
    expect(run(unpatched, unpatched, graph, '--flag', 'x').status).toBe(2)
    expect(run('--remeasured', 'flagged').status).toBe(2)
  })
})
