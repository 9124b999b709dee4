/**
 * Per-agent policy: one engine per realm, each with its own config. Mounted in an agent's isolated `compaction`
 * realm, an engine's listeners are scoped to that agent, so two agents on one loop follow two policies.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Context } from '@deepseek-ai/cordis'
import type { ProjectionCompactionConfig } from '@dsh-seam/compaction-effective-projection'
import { hasProjectionAwareCompaction, ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { bootScenario, keepLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests } from './support.ts'

const dsh = await patchedDsh()

async function mountFor(agent: Agent, config: ProjectionCompactionConfig): Promise<Context> {
  const realm = agent.ctx.isolate('compaction')
  await realm.plugin(ProjectionAwareCompactionEngine, config)
  return realm
}

describe('per-agent policy', () => {
  it('applies each agent’s own engine config: auto pressure for one, overflow-only for the other', async () => {
    const { loop, converse } = await bootScenario({ dsh, userChars: 120, replyChars: (turn: number) => (turn === 8 || turn === 9 ? 3000 : 400) })
    const auto = loop.create('auto')
    const quiet = loop.create('overflow-only')
    const autoRealm = await mountFor(auto, {})
    const quietRealm = await mountFor(quiet, { pressure: 'overflow-only' })
    keepLastTurns(auto, 3)
    keepLastTurns(quiet, 3)
    await converse(auto, 1, 11)
    await converse(quiet, 1, 11)
    expect(loop.errors).toEqual([])
    expect(compactionsOf(auto.session.events).map(c => c.turn)).toEqual([10])
    expect(compactionsOf(quiet.session.events)).toEqual([])
    expect([hasProjectionAwareCompaction(autoRealm), hasProjectionAwareCompaction(quietRealm), hasProjectionAwareCompaction(loop.ctx)]).toEqual([true, true, false])
    expectEveryRequestReplayed(auto.session.events, loopRequests(loop, auto))
    expectEveryRequestReplayed(quiet.session.events, loopRequests(loop, quiet))
  })
})
