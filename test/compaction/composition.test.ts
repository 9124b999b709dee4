/**
 * Projection-aware compaction judges the host's final, normalized selection, whatever order the `agent/context`
 * listeners were registered in: a `{ prepend: true }` listener registered after the engine (outermost, never calling
 * `next()`), one registered before it, and several selecting listeners where the outer one widens what the inner kept.
 */

import type { Agent, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { Context } from '@deepseek-ai/cordis'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { bootScenario, keepLastTurns, requestPrice } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests } from './support.ts'

const dsh = await patchedDsh()
const WINDOW = 3000
const CONFIG = { thresholdRatio: 0.8 }
const THRESHOLD = WINDOW * CONFIG.thresholdRatio
const TURNS = 12

/** Sends the whole surface without asking the rest of the chain. */
function everything(agent: Agent, on: Context = agent.ctx): void {
  on.on('agent/context', ({ nodes }) => Promise.resolve({ include: nodes.map(node => node.seq), revision: 'everything' }), { prepend: true })
}

/** Asks the chain, then adds back every node the inner listeners left out: a wider outer selection. */
function widenAll(agent: Agent): void {
  agent.ctx.on('agent/context', async ({ nodes }, next): Promise<ContextSelection> => {
    const inner = await next()
    return { include: [...inner.include, ...nodes.map(node => node.seq)], revision: 'widened' }
  }, { prepend: true })
}

type Arrange = 'prepend after the engine' | 'prepend before the engine' | 'an outer listener widening an inner one'

async function run(arrange: Arrange) {
  const atRoot = arrange !== 'prepend before the engine'
  const { loop, converse } = await bootScenario({
    dsh,
    contextWindow: WINDOW,
    userChars: 200,
    replyChars: 900,
    ...atRoot ? { engine: { kind: 'projection-aware', config: CONFIG } } : {},
  })
  const agent = loop.create('composition')
  switch (arrange) {
    case 'prepend after the engine':
      everything(agent)
      break
    case 'prepend before the engine': {
      everything(agent)
      await agent.ctx.isolate('compaction').plugin(ProjectionAwareCompactionEngine, CONFIG)
      break
    }
    case 'an outer listener widening an inner one':
      keepLastTurns(agent, 2)
      widenAll(agent)
      break
  }
  await converse(agent, 1, TURNS)
  return { loop, agent }
}

describe('projection-aware compaction and the order of agent/context listeners', () => {
  it.each<Arrange>(['prepend after the engine', 'prepend before the engine', 'an outer listener widening an inner one'])('judges the request the host sends with %s: compacts, and no request reaches the threshold', async arrange => {
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
