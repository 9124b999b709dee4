/**
 * Projection-aware compaction judges the host's normalized selection whatever order the agent's policy and the engine
 * were mounted in (the engine registers no `agent/context` listener, so it never competes with the policy): a policy
 * registered after the engine, one registered before it, and a policy that composes two selections inside its one
 * listener (the outer widening what the inner kept).
 */

import type { Agent, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { Context } from '@deepseek-ai/cordis'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { bootScenario, oldestKeptTurnStart, requestPrice } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests } from './support.ts'

const dsh = await patchedDsh()
const WINDOW = 3000
const CONFIG = { thresholdRatio: 0.8 }
const THRESHOLD = WINDOW * CONFIG.thresholdRatio
const TURNS = 12

/** Sends the whole surface without calling `next()`. */
function everything(agent: Agent, on: Context = agent.ctx): void {
  on.on('agent/context', ({ nodes }) => Promise.resolve({ include: nodes.map(node => node.seq), revision: 'everything' }))
}

/** One listener composing two policies: keep the last two turns, then add back every node they left out. */
function widenAll(agent: Agent): void {
  agent.ctx.on('agent/context', async ({ nodes, turn }, next): Promise<ContextSelection> => {
    const from = oldestKeptTurnStart(agent.session.events, turn, 2)
    const inner = (await next()).include.filter(seq => seq > from)
    return { include: [...inner, ...nodes.map(node => node.seq)], revision: 'last-2-turns+widen-all' }
  })
}

type Arrange = 'a policy after the engine' | 'a policy before the engine' | 'one listener composing two policies'

async function run(arrange: Arrange) {
  const atRoot = arrange !== 'a policy before the engine'
  const { loop, converse } = await bootScenario({
    dsh,
    contextWindow: WINDOW,
    userChars: 200,
    replyChars: 900,
    ...atRoot ? { engine: { kind: 'projection-aware', config: CONFIG } } : {},
  })
  const agent = loop.create('composition')
  switch (arrange) {
    case 'a policy after the engine':
      everything(agent)
      break
    case 'a policy before the engine': {
      everything(agent)
      await agent.ctx.isolate('compaction').plugin(ProjectionAwareCompactionEngine, CONFIG)
      break
    }
    case 'one listener composing two policies':
      widenAll(agent)
      break
  }
  await converse(agent, 1, TURNS)
  return { loop, agent }
}

describe('projection-aware compaction and the order of mounting', () => {
  it.each<Arrange>(['a policy after the engine', 'a policy before the engine', 'one listener composing two policies'])('judges the request the host sends with %s: compacts, and no request reaches the threshold', async arrange => {
    const { loop, agent } = await run(arrange)
    expect(loop.errors).toEqual([])
    const sent = loopRequests(loop, agent)
    expect(sent).toHaveLength(TURNS)
    expect(compactionsOf(agent.session.events).length).toBeGreaterThan(0)
    const prices = sent.map(request => requestPrice(loop.ctx.tokenMeter, request))
    expect(prices.filter(price => price >= THRESHOLD)).toEqual([])
    expectEveryRequestReplayed(agent.session.events, sent)
  })
})
