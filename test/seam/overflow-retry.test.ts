/**
 * A provider context overflow, recovered by DSH's real compaction-basic engine (compact, then retry), re-runs
 * `agent/context` over the replaced surface: the retry is re-projected and rebuilt from the log.
 */

import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { bootLoop, failureReply, patchedDsh, rebuildRequestsByPrefix, textReply } from '@dsh-seam/loop-testkit'
import { projectionEvents } from '@dsh-seam/agent-context'
import { describe, expect, it } from 'vitest'
import { requestsOf, textOf } from './support.ts'

const dsh = await patchedDsh()
const summarizing = (request: GenerateOptions): boolean =>
  request.messages.at(-1)!.content.some(block => block.type === 'text' && block.text.includes('acting as a compaction engine'))

describe('overflow retry', () => {
  it('re-projects the compacted surface before the retried request', async () => {
    let overflowed = false
    const loop = await bootLoop(dsh, {
      plugins: [[dsh.compactionBasic.default, { thresholdRatio: 0.99, retainRatio: 0.1 }]],
      fallback: (request) => {
        if (summarizing(request)) return textReply('SUMMARY of the earlier turns')
        if (textOf(request.messages.at(-1)!) === 'overflowing question' && !overflowed) {
          overflowed = true
          return failureReply({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long' })
        }
        return textReply(`answer ${request.messages.length}: ${'a long in-character reply. '.repeat(40)}`)
      },
    })
    const agent = loop.create('overflow')
    const calls: { turn: number; generation: number; nodes: string[] }[] = []
    agent.ctx.on('agent/context', async ({ turn, nodes }, next) => {
      const all = await next()
      calls.push({ turn, generation: agent.session.surface.replaceGeneration, nodes: nodes.map(n => textOf(n.message)) })
      return { include: all.include.slice(-1), revision: 'tail' }
    })
    for (const text of ['one', 'two', 'overflowing question']) await loop.say(agent, text === 'overflowing question' ? text : `${text} ${'long user input. '.repeat(40)}`)
    expect(loop.errors.map(e => String(e.error))).toEqual([])
    const turn3 = calls.filter(c => c.turn === 3)
    expect(turn3).toHaveLength(2)
    expect(turn3[0]!.generation).toBe(0)
    expect(turn3[1]!.generation).toBe(1)
    expect(turn3[1]!.nodes.length).toBeLessThan(turn3[0]!.nodes.length)
    expect(turn3[1]!.nodes.some(text => text.includes('SUMMARY of the earlier turns'))).toBe(true)
    const projections = projectionEvents(agent.session.events).filter(p => p.data.turn === 3)
    expect(projections.map(p => [p.data.generation, p.data.surfaceNodes, p.data.includedNodes])).toEqual([[0, 5, 1], [1, 2, 1]])
    const conversation = requestsOf(loop, agent).filter(r => !summarizing(r))
    expect(conversation.at(-1)!.messages.map(textOf)).toEqual(['overflowing question'])
    expect(agent.session.events.filter(e => e.type === 'compaction/summary')).toHaveLength(1)
    expect(rebuildRequestsByPrefix(dsh, agent.session.events).map(r => JSON.stringify(r.messages)))
      .toEqual(conversation.map(r => JSON.stringify(r.messages)))
  })
})
