/**
 * A scripted provider context overflow: recovery compacts within the nodes the failed request sent, authorizes the
 * retry, the retry is re-projected over the replaced surface and succeeds. `pressure: 'overflow-only'` leaves every
 * other request alone.
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { decodeProjection, contextNodes, NodeIndex, replayRequests } from '@dsh-seam/agent-context'
import { canonicalJson, patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import type { EngineChoice } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { runLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests, seqOf } from './support.ts'

const dsh = await patchedDsh()
const BIG_TURNS = { userChars: 120, replyChars: (turn: number) => (turn === 8 || turn === 9 ? 3000 : 400) }

describe('provider context overflow', () => {
  it('compacts within the failed request’s projection, retries re-projected, and succeeds', async () => {
    const run = await runLastTurns({
      dsh,
      engine: { kind: 'projection-aware', config: { pressure: 'overflow-only' } },
      turns: 11,
      keepTurns: 3,
      overflowAt: 10,
      ...BIG_TURNS,
    })
    const { loop, agent } = run
    const { events } = agent.session
    expect(loop.errors).toEqual([])
    const compactions = compactionsOf(events)
    expect(compactions.map(c => c.turn)).toEqual([10])

    const attempts = replayRequests(events).filter(request => request.turn === 10)
    expect(attempts).toHaveLength(2)
    const [failed, retry] = attempts as [(typeof attempts)[number], (typeof attempts)[number]]
    expect(failed.projection).toBeDefined()
    const startOfFailed = events.slice(0, failed.seq)
    const surfaceAtFailure = dsh.session.foldSurface(startOfFailed).nodes
    const index = NodeIndex.forLog(contextNodes(surfaceAtFailure, seq => events[seq] as SessionEvent), startOfFailed)
    const checked = decodeProjection(index, failed.projection!.include)
    if ('violation' in checked) throw new Error(checked.violation.detail)
    const sentByFailed = checked.included.map(at => index.seqs[at])
    const shadowed = compactions[0]!.shadowedSeqs
    expect(shadowed.every(seq => sentByFailed.includes(seq))).toBe(true)
    const userOfTurn10 = events.find(e => e.seq > seqOf(events, 'step/start', (data: { turn: number }) => data.turn === 10) && e.type === 'user/message')!.seq
    expect(shadowed).not.toContain(userOfTurn10)

    expect([failed.generation, retry.generation]).toEqual([0, 1])
    expect(retry.projection?.generation).toBe(1)
    expect(retry.messages.length).toBeLessThan(failed.messages.length)
    expect(events.some(e => e.type === 'assistant/message' && (e).data.turn === 10)).toBe(true)
    expect(expectEveryRequestReplayed(events, loopRequests(loop, agent))).toBe(12)
  })

  it('recovers an overflow of a request sent without a request/projection exactly as compaction-basic does', async () => {
    const drive = (engine: EngineChoice) => runLastTurns({ dsh, engine, turns: 4, keepTurns: 3, overflowAt: 3, userChars: 400, replyChars: 1200 })
    const aware = await drive({ kind: 'projection-aware' })
    const basic = await drive({ kind: 'basic' })
    expect(aware.loop.errors).toEqual([])
    expect(aware.agent.session.events.filter(e => e.type === 'request/projection' && (e).data.turn === 3)).toEqual([])
    expect(compactionsOf(aware.agent.session.events).map(c => c.turn)).toContain(3)
    expect(canonicalJson(aware.agent.session.events)).toBe(canonicalJson(basic.agent.session.events))
    expectEveryRequestReplayed(aware.agent.session.events, loopRequests(aware.loop, aware.agent))
  })
})
