/**
 * `agent/context-selected`: the host's normalized selection, shown once per request attempt (every node without an
 * `agent/context` listener), scope-filtered like `agent/context`; after a listener moved the surface the host selects
 * once more without showing it again, and a second move fails the step.
 */

import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { projectionEvents } from '@dsh-seam/agent-context'
import { describe, expect, it } from 'vitest'
import { expectRequestsRebuiltFromLog, requestsOf } from './support.ts'

const dsh = await patchedDsh()

interface Shown { step: number; include: readonly number[]; requiredSeqs: readonly number[]; replaceableSeqs: readonly number[] }

describe('agent/context-selected', () => {
  it('shows the include the request sends (required seqs merged, tool units whole), whatever the listener returned', async () => {
    const loop = await bootLoop(dsh, {
      script: [textReply('one'), toolCallReply([{ id: 'call-1', name: 'echo', args: { text: 'x' } }]), textReply('two')],
    })
    const agent = loop.create('selected')
    const shown: Shown[] = []
    agent.ctx.on('agent/context-selected', ({ step, include, requiredSeqs, replaceableSeqs }) => {
      shown.push({ step, include: [...include], requiredSeqs: [...requiredSeqs], replaceableSeqs: [...replaceableSeqs] })
    })
    agent.ctx.on('agent/context', () => Promise.resolve({ include: [], revision: 'nothing' }))
    await loop.say(agent, 'first')
    await loop.say(agent, 'second')
    const requests = requestsOf(loop, agent)
    expect(shown.map(entry => entry.step)).toEqual([1, 1, 2])
    for (const [i, entry] of shown.entries()) {
      for (const seq of entry.replaceableSeqs) expect(entry.requiredSeqs).toContain(seq)
      expect(entry.include).toEqual([...new Set([...entry.include, ...entry.requiredSeqs])].sort((a, b) => a - b))
      expect(requests[i]!.messages).toHaveLength(entry.include.length)
    }
    // The step after the tool call sends the call and its result, though the listener selected nothing.
    const call = agent.session.events.find(e => e.type === 'assistant/message' && JSON.stringify(e.data).includes('call-1'))
    expect(call).toBeDefined()
    expect(shown[2]!.include).toContain(call!.seq)
    expect(projectionEvents(agent.session.events).length).toBeGreaterThan(0)
    expectRequestsRebuiltFromLog(loop, agent)
  })

  it('shows a frozen include, and stops at the first listener that returns a bail value, as cordis\' serial does', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('bail')
    const heard: string[] = []
    const refused: string[] = []
    agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-1), revision: 'last' }))
    // The event is typed `void`; an untyped listener that returns a value still bails, as under `ctx.serial`.
    const bails = (({ include }: { include: readonly number[] }) => {
      heard.push('first')
      try {
        (include as number[]).push(999)
      } catch (error: unknown) {
        refused.push((error as Error).name)
      }
      return true
    }) as unknown as () => void
    agent.ctx.on('agent/context-selected', bails)
    agent.ctx.on('agent/context-selected', () => { heard.push('second') })
    await loop.say(agent, 'a')
    expect(loop.errors).toEqual([])
    expect(heard).toEqual(['first'])
    expect(refused).toEqual(['TypeError'])
    expectRequestsRebuiltFromLog(loop, agent)
  })

  it('shows every node, as sent, to an agent without an agent/context listener, and logs no projection', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('observed')
    const shown: number[][] = []
    agent.ctx.on('agent/context-selected', ({ include, nodes }) => {
      expect(include).toEqual(nodes.map(node => node.seq))
      shown.push([...include])
    })
    await loop.say(agent, 'a')
    await loop.say(agent, 'b')
    expect(shown.map(include => include.length)).toEqual(requestsOf(loop, agent).map(request => request.messages.length))
    expect(projectionEvents(agent.session.events)).toEqual([])
  })

  it('reaches only the agents an agent/context listener in the same scope would see', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const mine = loop.create('mine')
    const other = loop.create('other')
    const seen: string[] = []
    mine.ctx.on('agent/context-selected', ({ agent }) => { seen.push(String(agent.id)) })
    for (const agent of [mine, other]) agent.ctx.on('agent/context', async (_payload, next) => next())
    await loop.say(mine, 'a')
    await loop.say(other, 'b')
    expect(seen).toEqual(['mine'])
  })

  function movingLoop() {
    return bootLoop(dsh, { fallback: textReply('ok') }).then(loop => {
      const agent = loop.create('moving')
      const shown: Shown[] = []
      let moved = false
      agent.ctx.on('agent/context', async (_payload, next) => {
        const all = await next()
        return { include: all.include.slice(-1), revision: 'tail' }
      })
      agent.ctx.on('agent/context-selected', ({ step, include, requiredSeqs, replaceableSeqs }) => {
        shown.push({ step, include: [...include], requiredSeqs: [...requiredSeqs], replaceableSeqs: [...replaceableSeqs] })
        const surface = agent.session.surface.nodes
        if (moved || surface.length < 2) return
        moved = true
        agent.session.append('user/message', loop.user('summary'), {
          surfaceOp: { op: 'replace', start: surface[0]!, end: surface.at(-2)! },
          sourceEventSeqs: surface.slice(0, -1),
        })
      })
      return { loop, agent, shown }
    })
  }

  it('after a listener replaced the surface, selects once more over the new surface without showing it again', async () => {
    const { loop, agent, shown } = await movingLoop()
    await loop.say(agent, 'one')
    await loop.say(agent, 'two')
    expect(loop.errors).toEqual([])
    expect(shown).toHaveLength(2)
    expect(projectionEvents(agent.session.events).at(-1)!.data.generation).toBe(1)
    expectRequestsRebuiltFromLog(loop, agent)
  })

  it('a listener that moves the surface on every pass fails the step with surface-changed, and the log stays replayable', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('restless')
    await loop.say(agent, 'one')
    agent.ctx.on('agent/context', async (_payload, next) => {
      agent.session.append('user/message', loop.user('more'), { surfaceOp: 'append' })
      return { include: (await next()).include.slice(-1), revision: 'tail' }
    })
    await loop.say(agent, 'two')
    expect(loop.errors.map(e => (e.error as { code?: string }).code)).toEqual(['surface-changed'])
    expect(requestsOf(loop, agent)).toHaveLength(1)
    expectRequestsRebuiltFromLog(loop, agent)
  })
})
