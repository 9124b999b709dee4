/**
 * The patched agent-loop invariant compares every loop-built request with the messages rebuilt from the log
 * (surface derivation filtered by the step's `request/projection`), and still catches divergence.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import { hasAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import { bootLoop, patchedDsh, stockDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { requestsOf } from './support.ts'

const dsh = await patchedDsh()

type BuildRequest = (turn: number, step: number, tools: unknown, system: string, messages: Message[], signal: AbortSignal) => Promise<unknown>

/** Wrap the (unexported) loop agent's buildRequest on one instance, as DSH's own shared probe does. */
function interceptMessages(agent: Agent, rewrite: (messages: Message[]) => Message[]): void {
  const original = (Object.getPrototypeOf(agent) as { buildRequest: BuildRequest }).buildRequest
  ;(agent as unknown as { buildRequest: BuildRequest }).buildRequest = function (this: Agent, turn, step, tools, system, messages, signal) {
    return original.call(this, turn, step, tools, system, rewrite(messages), signal)
  }
}

describe('the log-rebuilt request invariant', () => {
  it('refuses, at append, a request/projection that is not the event\'s shape, before the log changes', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('malformed')
    await loop.say(agent, 'a')
    const before = agent.session.seq
    const malformed = { turn: 9, step: 9, generation: 7, include: [[999_999, 3]] as [number, number][], surfaceNodes: -1, includedNodes: 1.5 }
    expect(() => agent.session.append('request/projection', malformed)).toThrow(/^session event "request\/projection" is not \{ turn, step/)
    expect(agent.session.seq).toBe(before)
  })

  it('accepts projected requests and rejects a subset the log does not record', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('diverging')
    await loop.say(agent, 'first')
    interceptMessages(agent, messages => messages.slice(-1))
    await loop.say(agent, 'second')
    expect(loop.errors.map(e => (e.error as Error).name)).toEqual(['InvariantError'])
    expect(String(loop.errors[0]!.error)).toMatch(/llm request for session "diverging" diverges from the dispatch-time durable derivation/)
    expect(requestsOf(loop, agent)).toHaveLength(1)
  })

  it('rejects a request whose request/projection does not match the surface', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('forged')
    await loop.say(agent, 'first')
    agent.ctx.on('agent/request', async ({ turn, step }, next) => {
      const seq = agent.session.surface.nodes.at(-1)!
      agent.session.append('request/projection', { turn, step, generation: 7, include: [[seq, seq]], surfaceNodes: 3, includedNodes: 1 })
      return next()
    })
    await loop.say(agent, 'second')
    expect(String(loop.errors[0]!.error)).toMatch(/cannot be rebuilt from its log: session log does not replay at seq \d+ \(turn 2 step 1\) \[projection-generation\]: request\/projection was made under surface generation 7, but the request was sent under generation 0/)
    expect(requestsOf(loop, agent)).toHaveLength(1)
  })

  it.each([
    ['omits the turn’s own input', 'required-missing', (seqs: Record<string, number>) => [[seqs.first!, seqs.first!]]],
    ['splits a tool-call unit', 'open-unit', (seqs: Record<string, number>) => [[seqs.first!, seqs.call!], [seqs.second!, seqs.second!]]],
    ['opens with an assistant message', 'opening', (seqs: Record<string, number>) => [[seqs.call!, seqs.result!], [seqs.second!, seqs.second!]]],
  ] as const)('rejects a request that does not follow a forged projection that %s, which decodes: the request diverges from the log', async (_name, rule, include) => {
    const loop = await bootLoop(dsh, { script: [toolCallReply([{ id: 'c1', name: 'echo', args: { text: 'x' } }]), textReply('done'), textReply('never')] })
    const agent = loop.create(`forged-${rule}`)
    await loop.say(agent, 'first')
    agent.ctx.on('agent/request', async ({ turn, step }, next) => {
      const { events, surface } = agent.session
      const seqOf = (match: (e: (typeof events)[number]) => boolean): number => events.find(match)!.seq
      const seqs = {
        first: seqOf(e => e.type === 'user/message'),
        call: seqOf(e => e.type === 'assistant/message'),
        result: seqOf(e => e.type === 'tool/result'),
        second: surface.nodes.at(-1)!,
      }
      const runs = include(seqs) as [number, number][]
      const includedNodes = runs.reduce((n, [a, b]) => n + surface.nodes.indexOf(b) - surface.nodes.indexOf(a) + 1, 0)
      agent.session.append('request/projection', { turn, step, generation: 0, include: runs, surfaceNodes: surface.nodes.length, includedNodes })
      return next()
    })
    await loop.say(agent, 'second')
    expect(loop.errors.map(e => (e.error as Error).name)).toEqual(['InvariantError'])
    // Readers decode a projection and do not re-judge it by today's host policy: the request is checked against what it says.
    expect(String(loop.errors[0]!.error)).toMatch(/diverges from the dispatch-time durable derivation/)
    expect(requestsOf(loop, agent)).toHaveLength(2)
  })

  it('is advertised by the capability flag only on the patched build', async () => {
    expect(hasAgentContextSeam((await bootLoop(dsh)).ctx)).toBe(true)
    expect(hasAgentContextSeam((await bootLoop(await stockDsh())).ctx)).toBe(false)
  })
})
