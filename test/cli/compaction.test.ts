/**
 * `dsh-seam` on a persisted session where projection-aware compaction replaces the surface inside projected steps
 * (the compaction package's "last 3 turns exceed" scenario): projections on both sides of each surface replace verify,
 * and inspect counts the nodes of the replaced surface.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { replayRequests } from '@dsh-seam/agent-context'
import type { RequestSummary } from '@dsh-seam/cli'
import { EXIT } from '@dsh-seam/cli'
import { sessionLogPath } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { compactedSession, runCli } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-compaction-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('dsh-seam on a compacted, projected session', () => {
  it('verifies projections made under every surface generation', async () => {
    const run = await compactedSession(root)
    expect(run.compactions).toBeGreaterThan(0)
    const generations = new Set(replayRequests(run.agent.session.events).filter(request => request.projection !== undefined).map(request => request.generation))
    expect(generations.size).toBeGreaterThan(1)

    const path = sessionLogPath(run.loop, run.agent)
    expect(runCli('verify', path)).toMatchObject({ status: EXIT.ok, stderr: '' })
    const { requests } = JSON.parse(runCli('inspect', path, '--json').stdout) as { requests: RequestSummary[] }
    expect(requests.map(request => request.includedNodes)).toEqual(run.requests.map(request => request.messages.length))
  })
})
