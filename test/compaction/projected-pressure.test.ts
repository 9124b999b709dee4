/**
 * A projection that itself exceeds the threshold: projection-aware compaction judges the request about to be sent
 * (inside the step, after projection), compacts only nodes that request sends, the host re-projects the replaced
 * surface once, and every request still rebuilds from the log.
 */

import type { Agent, ContextNode } from '@deepseek-ai/dsh-agent'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { priceRequest, requestEnvelope } from '@dsh-seam/compaction-effective-projection'
import { patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import type { EngineChoice, LastTurnsOptions } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { bootScenario, oldestKeptTurnStart, requestPrice } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests, seqOf } from './support.ts'

const dsh = await patchedDsh()
const THRESHOLD = 1600

/** One `agent/context` pass as the agent's policy saw it. */
interface Pass {
  turn: number
  step: number
  generation: number
  logLength: number
  /** Price of the selection the last-turns listener returned. */
  selectedTokens: number
}

/** The agent's one policy: keep the last three turns, recording every pass. */
function spyThenKeepLastTurns(agent: Agent, passes: Pass[], meter: Parameters<typeof priceRequest>[0]): void {
  agent.ctx.on('agent/context', async (payload, next) => {
    const logLength = agent.session.events.length
    const from = oldestKeptTurnStart(agent.session.events, payload.turn, 3)
    const selection = { include: (await next()).include.filter(seq => seq > from), revision: 'last-3-turns' }
    const chosen = new Set(selection.include)
    passes.push({
      turn: payload.turn,
      step: payload.step,
      generation: agent.session.surface.replaceGeneration,
      logLength,
      selectedTokens: priceRequest(meter, {
        header: requestEnvelope(payload.system, payload.tools),
        messages: payload.nodes.filter((node: ContextNode) => chosen.has(node.seq)).map((node: ContextNode) => node.message),
      }),
    })
    return selection
  })
}

async function converse(engine: EngineChoice, sizes: Pick<LastTurnsOptions, 'userChars' | 'replyChars'>, turns: number) {
  const { loop, converse: say } = await bootScenario({ dsh, engine, ...sizes })
  const agent = loop.create('projected-pressure')
  const passes: Pass[] = []
  spyThenKeepLastTurns(agent, passes, loop.ctx.tokenMeter)
  await say(agent, 1, turns)
  return { loop, agent, passes, events: agent.session.events }
}

const oldestKeptStart = (events: readonly SessionEvent[], turn: number): number =>
  seqOf(events, 'turn/start', (data: { turn: number }) => data.turn === turn - 2)

/** Turns 8 and 9 answer with ~750 tokens each: the last-3-turns projection of turn 10 exceeds 1,600 tokens. */
const BIG_TURNS = { userChars: 120, replyChars: (turn: number) => (turn === 8 || turn === 9 ? 3000 : 400) }

describe('a projection that itself exceeds the threshold', () => {
  it('is compacted inside the step, within the nodes it sends, and the request is re-projected before it is built', async () => {
    const { loop, agent, passes, events } = await converse({ kind: 'projection-aware' }, BIG_TURNS, 11)
    expect(loop.errors).toEqual([])
    const compactions = compactionsOf(events)
    expect(compactions.map(c => c.turn)).toEqual([10])
    const [compaction] = compactions as [(typeof compactions)[number]]

    const stepStart = seqOf(events, 'step/start', (data: { turn: number }) => data.turn === 10)
    const firstChunk = seqOf(events, 'assistant/chunk', (data: { turn: number }) => data.turn === 10)
    expect(compaction.startSeq).toBeGreaterThan(stepStart)
    expect(compaction.startSeq).toBeLessThan(firstChunk)

    const userOfTurn10 = events.find(e => e.seq > stepStart && e.type === 'user/message')!.seq
    expect(compaction.shadowedSeqs.every(seq => seq > oldestKeptStart(events, 10))).toBe(true)
    expect(compaction.shadowedSeqs).not.toContain(userOfTurn10)

    const turn10 = passes.filter(p => p.turn === 10)
    expect(turn10.map(p => p.generation)).toEqual([0, 1])
    expect(turn10[0]!.selectedTokens).toBeGreaterThanOrEqual(THRESHOLD)
    expect(turn10[1]!.selectedTokens).toBeLessThan(THRESHOLD)
    const projections = events.filter((e): e is SessionEvent<'request/projection'> => e.type === 'request/projection' && e.data.turn === 10)
    expect(projections.map(p => p.data.generation)).toEqual([1])

    const sent = loopRequests(loop, agent)
    const request10 = sent[9]!
    expect(requestPrice(loop.ctx.tokenMeter, request10)).toBeLessThan(THRESHOLD)
    expect(request10.messages.some(m => m.content.some(b => b.type === 'text' && b.text.includes('SUMMARY of the earlier turns')))).toBe(true)
    expect(passes.filter(p => p.turn !== 10).every(p => p.selectedTokens < THRESHOLD)).toBe(true)
    expect(expectEveryRequestReplayed(events, sent)).toBe(11)
  })

  it('stock compaction on the same conversation rewrites nodes the projection already leaves out', async () => {
    const { loop, events } = await converse({ kind: 'basic' }, BIG_TURNS, 11)
    expect(loop.errors).toEqual([])
    const compactions = compactionsOf(events)
    expect(compactions.length).toBeGreaterThan(0)
    const unsent = compactions.flatMap(c => c.shadowedSeqs.filter(seq => seq <= oldestKeptStart(events, c.turn as number)))
    expect(unsent.length).toBeGreaterThan(0)
  })

  it('never compacts in the host’s second selection after a compaction, so a request still above the threshold is sent, not rejected', async () => {
    const hugeTurn4 = { userChars: (turn: number) => (turn === 4 ? 7000 : 120), replyChars: 400 }
    const { loop, agent, passes, events } = await converse({ kind: 'projection-aware' }, hugeTurn4, 5)
    expect(loop.errors).toEqual([])
    const turn4 = passes.filter(p => p.turn === 4)
    expect(turn4).toHaveLength(2)
    expect(turn4[0]!.generation).toBe(0)
    expect(turn4[1]!.generation).toBeGreaterThan(0)
    expect(turn4[1]!.selectedTokens).toBeGreaterThanOrEqual(THRESHOLD)
    expect(events.filter(e => e.seq >= turn4[1]!.logLength && e.type.startsWith('compaction/')).filter(e => {
      const owner = events.findLast(s => s.seq <= e.seq && s.type === 'turn/start') as SessionEvent<'turn/start'>
      return owner.data.turn === 4
    })).toEqual([])
    const sent = loopRequests(loop, agent)
    expect(sent).toHaveLength(5)
    expect(requestPrice(loop.ctx.tokenMeter, sent[3]!)).toBeGreaterThanOrEqual(THRESHOLD)
    expectEveryRequestReplayed(events, sent)
  })
})
