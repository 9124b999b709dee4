/**
 * The basic engine's optional model-free pass on the projected path: once the projected request is over the threshold,
 * the tool-result pruner rewrites the oversized result, the engine follows the replacement into the sent set and
 * remeasures, and the request goes out pruned with no summary, as the basic engine relieves the same step.
 */

import ToolResultPruner, { PRUNE_MARKER } from '@deepseek-ai/dsh-compaction-tool-result-pruner'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { compactionsOf, expectEveryRequestReplayed, loopRequests } from './support.ts'

const dsh = await patchedDsh()
const LOG = 'log line\n'.repeat(600)

async function dumpTurn(engine: 'projection-aware' | 'basic', pruner: boolean) {
  const loop = await bootLoop(dsh, {
    contextWindow: 2000,
    plugins: [
      ...pruner ? [[ToolResultPruner, { thresholdChars: 1200, headChars: 300, tailChars: 100 }] as [unknown, unknown]] : [],
      [engine === 'basic' ? dsh.compactionBasic.default : ProjectionAwareCompactionEngine, { auto: true, thresholdRatio: 0.5, retainTokens: 200 }],
    ],
    script: [toolCallReply([{ id: 'call-0', name: 'dump', args: {} }]), textReply('done')],
    fallback: textReply('CHECKPOINT'),
  })
  loop.ctx.tools.register(dsh.tools.defineContentToolFixture({
    name: 'dump',
    description: 'Print the build log.',
    parameters: {},
    execute: () => Promise.resolve([{ type: 'text' as const, text: LOG }]),
  }))
  const agent = loop.create(`dump-${engine}-${pruner ? 'pruned' : 'plain'}`)
  await loop.say(agent, 'Show me the build log.')
  const sentText = loopRequests(loop, agent).map(request => JSON.stringify(request.messages.map(({ id: _id, ...message }) => message)))
  return { loop, agent, events: agent.session.events, sentText }
}

describe('the tool-result pruner under projection-aware compaction', () => {
  it('prunes the oversized result of the projected request, which then goes out below the threshold without a summary', async () => {
    const { loop, agent, events, sentText } = await dumpTurn('projection-aware', true)
    expect(loop.errors).toEqual([])
    expect(events.filter(event => event.type === 'compaction/prune')).toHaveLength(1)
    expect(compactionsOf(events)).toEqual([])
    expect(sentText).toHaveLength(2)
    expect(sentText[1]).toContain(JSON.stringify(PRUNE_MARKER).slice(1, -1))
    expect(sentText[1]).not.toContain(JSON.stringify(LOG).slice(1, -1))
    expectEveryRequestReplayed(events, loopRequests(loop, agent))
  })

  it('prunes what the basic engine prunes, and without a pruner sends the result whole', async () => {
    const basic = await dumpTurn('basic', true)
    const projected = await dumpTurn('projection-aware', true)
    const plain = await dumpTurn('projection-aware', false)
    expect(basic.events.filter(event => event.type === 'compaction/prune')).toHaveLength(1)
    expect(projected.sentText[1]).toBe(basic.sentText[1])
    expect(plain.events.some(event => event.type === 'compaction/prune')).toBe(false)
    expect(plain.sentText[1]).toContain(JSON.stringify(LOG).slice(1, -1))
  })
})
