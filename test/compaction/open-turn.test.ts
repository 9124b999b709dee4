/**
 * One long turn of tool calls, with no listener and with a runtime-context snapshot that never changes: the turn's input
 * and the snapshot are required and sit at the head of the surface, and projection-aware compaction still relieves
 * pressure by compacting the tool history between them and the kept tail, as the basic engine compacts a long open turn.
 */

import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { compactionsOf, expectEveryRequestReplayed, loopRequests, seqOf } from './support.ts'

const dsh = await patchedDsh()
const CALLS = 12

async function longTurn(engine: 'projection-aware' | 'basic') {
  const loop = await bootLoop(dsh, {
    contextWindow: 2000,
    plugins: [[
      engine === 'basic' ? dsh.compactionBasic.default : ProjectionAwareCompactionEngine,
      { auto: true, maxTokens: 256, thresholdRatio: 0.5, retainTokens: 200, ...engine === 'basic' ? {} : { summary: 'reference' } },
    ]],
    script: [
      ...Array.from({ length: CALLS }, (_, i) => toolCallReply([{ id: `call-${i}`, name: 'echo', args: { text: `${i} ${'result '.repeat(60)}` } }])),
      textReply('done'),
    ],
    fallback: textReply('CHECKPOINT'),
  })
  const agent = loop.create(`long-turn-${engine}`)
  agent.inject(dsh.llm.createUserMessage({
    content: [{ type: 'text', text: 'SNAPSHOT: the working directory is /srv/app' }],
    source: { kind: 'plugin', plugin: 'time-context', form: 'snapshot', sections: [{ name: 'time-context', text: 'cwd' }] },
  }))
  await loop.say(agent, `TASK: echo ${CALLS} long texts`)
  return { loop, agent, events: agent.session.events }
}

describe('a long open turn under projection-aware compaction', () => {
  it('compacts the tool history after the required input and snapshot, which stay verbatim', async () => {
    const { loop, agent, events } = await longTurn('projection-aware')
    expect(loop.errors.map(({ error }) => String(error))).toEqual([])
    const compactions = compactionsOf(events)
    expect(compactions.length).toBeGreaterThan(0)
    expect(compactions.every(compaction => compaction.turn === 1)).toBe(true)
    const snapshot = seqOf(events, 'user/message')
    const input = seqOf(events, 'user/message', (data: { content: { text?: string }[] }) => data.content[0]?.text?.startsWith('TASK') === true)
    const shadowed = compactions.flatMap(compaction => compaction.shadowedSeqs)
    expect(shadowed).not.toContain(snapshot)
    expect(shadowed).not.toContain(input)
    const texts = agent.session.deriveMessages().map(message => message.content.map(block => (block.type === 'text' ? block.text : '')).join(''))
    expect(texts.slice(0, 2)).toEqual(['SNAPSHOT: the working directory is /srv/app', `TASK: echo ${CALLS} long texts`])
    expect(agent.session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } })
    expectEveryRequestReplayed(events, loopRequests(loop, agent))
  })

  it('relieves the same turn the basic engine relieves', async () => {
    const basic = await longTurn('basic')
    const projected = await longTurn('projection-aware')
    expect(compactionsOf(basic.events).length).toBeGreaterThan(0)
    expect(compactionsOf(projected.events).length).toBeGreaterThan(0)
  })
})
