/**
 * One `agent/context` listener selects an agent's requests: a second one in the agent's scope fails the step loudly,
 * whatever order the two were registered in (a hot reload re-registers a plugin last), sends nothing and logs no
 * projection; with one left the agent runs again, and the log says which policy chose by its revision.
 */

import { AgentContextError } from '@deepseek-ai/dsh-agent-loop'
import { projectionEvents } from '@dsh-seam/agent-context'
import { bootLoop, patchedDsh, textReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { expectRequestsRebuiltFromLog, requestsOf } from './support.ts'

const dsh = await patchedDsh()

describe('one agent/context listener per agent', () => {
  it.each([['keep-last first'], ['keep-first first']])('two listeners (%s) fail the step with multiple-listeners; disposing either restores the other', async (order) => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('owned')
    await loop.say(agent, 'before')
    const last = (): (() => void) => agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-1), revision: 'keep-last' }))
    const first = (): (() => void) => agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(0, 1), revision: 'keep-first' }))
    const [disposeA, disposeB] = order === 'keep-last first' ? [last(), first()] : [first(), last()]
    await loop.say(agent, 'contested')
    expect(loop.errors).toHaveLength(1)
    const error = loop.errors[0]!.error as AgentContextError
    expect(error).toBeInstanceOf(AgentContextError)
    expect(error.code).toBe('multiple-listeners')
    expect(error.message).toBe('agent/context [multiple-listeners] for agent "owned" has more than one listener in the agent\'s scope: one policy selects an agent\'s requests (compose policies inside it); listeners: 2')
    expect(requestsOf(loop, agent)).toHaveLength(1)
    expect(projectionEvents(agent.session.events)).toEqual([])
    const end = agent.session.events.findLast(e => e.type === 'turn/end')!
    expect(end.data.reason).toMatchObject({ kind: 'error' })
    // Disposing one (the old copy a hot reload replaces) leaves the other as the agent's one policy.
    const kept = order === 'keep-last first' ? 'keep-first' : 'keep-last'
    disposeA()
    await loop.say(agent, 'settled')
    expect(loop.errors).toHaveLength(1)
    expect(projectionEvents(agent.session.events).map(e => e.data.revision)).toEqual([kept])
    disposeB()
    expect(expectRequestsRebuiltFromLog(loop, agent)).toBe(2)
  })

  it('does not count another agent\'s listener', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const a = loop.create('a')
    const b = loop.create('b')
    a.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-1), revision: 'a-policy' }))
    b.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-1), revision: 'b-policy' }))
    for (const text of ['one', 'two']) await Promise.all([loop.say(a, text), loop.say(b, text)])
    expect(loop.errors).toEqual([])
    expect(projectionEvents(a.session.events).map(e => e.data.revision)).toEqual(['a-policy'])
    expect(projectionEvents(b.session.events).map(e => e.data.revision)).toEqual(['b-policy'])
  })
})
