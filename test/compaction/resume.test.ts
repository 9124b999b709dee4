/**
 * Resume after projection-aware compaction: a persisted JSONL session with compactions and `request/projection`
 * events resumes on the patched build, keeps compacting within its projection, and every request before and after
 * the resume rebuilds from the one log.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson, patchedDsh } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { bootScenario, keepLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests } from './support.ts'

const dsh = await patchedDsh()
const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })

/** Turns 8, 9, 20 and 21 answer with ~750 tokens, so the last-3-turns projection exceeds 1,600 tokens after them; turns 5, 10, 15, 20 call a tool. */
const SIZES = { userChars: 120, replyChars: (turn: number) => (turn % 12 === 8 || turn % 12 === 9 ? 3000 : 400), toolEvery: 5 }

describe('resume after projection-aware compaction', () => {
  it('replays every request of the resumed log and compacts again within the projection', async () => {
    const persistRoot = mkdtempSync(join(tmpdir(), 'dsh-projected-compaction-'))
    roots.push(persistRoot)
    const first = await bootScenario({ dsh, engine: { kind: 'projection-aware' }, persistRoot, ...SIZES })
    const original = first.loop.create('resumed')
    keepLastTurns(original, 3)
    await first.converse(original, 1, 11)
    await first.loop.ctx.sessions.flush(original.session)
    expect(first.loop.errors).toEqual([])
    expect(compactionsOf(original.session.events).map(c => c.turn)).toEqual([10])
    const persisted = canonicalJson(original.session.events)
    const persistedCount = original.session.events.length

    const second = await bootScenario({ dsh, engine: { kind: 'projection-aware' }, persistRoot, ...SIZES })
    const { agent } = await second.loop.ctx.agentLoop.resume(second.loop.ctx, {
      resumeSessionId: dsh.session.SessionId('resumed'),
      agentOptions: { provider: 'fake', model: 'fake-model' },
    })
    expect(canonicalJson(agent.session.events.slice(0, persistedCount))).toBe(persisted)
    keepLastTurns(agent, 3)
    await second.converse(agent, 12, 23)
    expect(second.loop.errors).toEqual([])
    const turns = compactionsOf(agent.session.events).map(c => c.turn as number)
    expect(turns[0]).toBe(10)
    expect(turns.filter(turn => turn > 11).length).toBeGreaterThan(0)
    expect(agent.session.events.slice(persistedCount).some(e => e.type === 'tool/result')).toBe(true)
    const sent = [...loopRequests(first.loop, original), ...loopRequests(second.loop, agent)]
    expect(expectEveryRequestReplayed(agent.session.events, sent)).toBe(23 + 4)
  })
})
