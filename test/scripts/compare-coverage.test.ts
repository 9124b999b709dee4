/**
 * scripts/source-checkout/compare-coverage.mjs: a file newly below a per-file coverage threshold fails the comparison
 * where the series can affect it (a package it touches or a dependent), and is only reported elsewhere.
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
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
})
