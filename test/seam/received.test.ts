/**
 * `firstRequestDivergence`: replaying request invariants in a plugin author's own test, on a real patched loop.
 */

import type { ContextSelection } from '@deepseek-ai/dsh-agent'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { firstRequestDivergence } from '@dsh-seam/agent-context'

const dsh = await patchedDsh()

/** A keep-last-3-turns listener on a real patched loop, 10 turns with a tool call; the adapter's requests and the log. */
async function session() {
  const loop = await bootLoop(dsh, { script: [textReply('one'), toolCallReply([{ id: 'call-1', name: 'echo', args: { text: 'x' } }])], fallback: textReply('ok') })
  const agent = loop.create('received')
  agent.ctx.on('agent/context', async ({ nodes }, next): Promise<ContextSelection> => {
    const all = await next()
    const starts = agent.session.events.filter(event => event.type === 'turn/start').map(event => event.seq).slice(-3)
    return { include: all.include.filter(seq => seq >= (starts[0] ?? 0) || seq === nodes[0]?.seq), revision: 'last-3-turns' }
  })
  for (let turn = 1; turn <= 10; turn++) await loop.say(agent, `turn ${turn}`)
  expect(loop.errors).toEqual([])
  return { events: agent.session.events, received: loop.adapter.requests }
}

describe('firstRequestDivergence', () => {
  it('finds none when every request the adapter received rebuilds from the log', async () => {
    const { events, received } = await session()
    expect(events.some(event => event.type === 'request/projection')).toBe(true)
    expect(received).toHaveLength(11)
    expect(firstRequestDivergence(events, received)).toBeUndefined()
  })

  it('names the seq, turn and step of the first request that differs', async () => {
    const { events, received } = await session()
    const tampered = received.map((request, i) => i === 6 ? { ...request, messages: request.messages.slice(1) } : request)
    const chunks = events.filter(event => event.type === 'assistant/chunk')
    const divergence = firstRequestDivergence(events, tampered)!
    expect(divergence).toMatchObject({ code: 'request-differs', index: 6, turn: 6, step: 1 })
    expect(chunks.map(chunk => chunk.seq)).toContain(divergence.seq)
    expect(divergence.message).toMatch(/^request of turn 6 step 1 \(seq \d+\): message 0 differs/)
  })

  it('reports a missing request as request-count, and a log that does not replay by its code', async () => {
    const { events, received } = await session()
    expect(firstRequestDivergence(events, received.slice(0, -1))).toMatchObject({ code: 'request-count', index: 10, turn: 10 })
    const projection = events.findLast(event => event.type === 'request/projection')!
    const wrong = events.map(event => event === projection ? { ...event, data: { ...event.data, generation: 7 } } : event)
    expect(firstRequestDivergence(wrong, received)).toMatchObject({ code: 'projection-generation', turn: 10, step: 1 })
  })
})
