/**
 * Host invariants 1-5 of rfcs/0001-agent-context-seam.md on a real DSH rc.8 loop: placement, normalization,
 * selection only, the `request/projection` record, and a surface that moves while listeners run.
 */

import type { ContextSelection } from '@deepseek-ai/dsh-agent'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { projectionEvents } from '@dsh-seam/agent-context'
import { describe, expect, it } from 'vitest'
import { expectRequestsRebuiltFromLog, requestsOf, textOf } from './support.ts'

const dsh = await patchedDsh()

describe('agent/context placement (invariant 1)', () => {
  it('runs after the step appends its user messages and before the request is built, on every retry', async () => {
    const loop = await bootLoop(dsh, {
      script: [
        textReply('first'),
        [{ type: 'finish', reason: { kind: 'error', failure: { code: 'OVERLOADED', message: 'busy' } } }],
        textReply('second'),
      ],
    })
    const agent = loop.create('placement')
    const seen: { step: number; tail: string; logTail: string; headers: number }[] = []
    agent.ctx.on('agent/context', async (payload, next) => {
      const events = agent.session.events
      seen.push({
        step: payload.step,
        tail: textOf(payload.nodes.at(-1)!.message),
        logTail: events.at(-1)!.type,
        headers: events.filter(e => e.type === 'request/header').length,
      })
      return next()
    })
    agent.ctx.on('agent/request-error', () => Promise.resolve({ kind: 'retry' as const }))
    await loop.say(agent, 'hello')
    await loop.say(agent, 'again')
    expect(seen).toEqual([
      { step: 1, tail: 'hello', logTail: 'user/message', headers: 0 },
      { step: 1, tail: 'again', logTail: 'user/message', headers: 1 },
      { step: 1, tail: 'again', logTail: 'assistant/chunk', headers: 1 },
    ])
    expect(requestsOf(loop, agent)).toHaveLength(3)
  })
})

describe('normalization (invariant 2)', () => {
  it('dedupes, restores surface order, merges required seqs and keeps tool units whole', async () => {
    const loop = await bootLoop(dsh, {
      script: [
        textReply('reply one'),
        toolCallReply([{ id: 'call-1', name: 'echo', args: { text: 'x' } }, { id: 'call-2', name: 'echo', args: { text: 'y' } }]),
        textReply('reply two'),
        textReply('reply three'),
      ],
    })
    const agent = loop.create('normalize')
    let offered: { seq: number; role: string }[] = []
    let required: readonly number[] = []
    agent.ctx.on('agent/context', async ({ nodes, requiredSeqs }, next) => {
      await next()
      offered = nodes.map(n => ({ seq: n.seq, role: n.message.role }))
      required = requiredSeqs
      const toolResult = nodes.findLast(n => n.message.content.some(b => b.type === 'tool-result'))
      const first = nodes[0]!.seq
      // Reversed, duplicated, and naming one tool result of a two-call unit.
      return { include: toolResult ? [toolResult.seq, first, toolResult.seq, first] : [first], revision: 'probe' }
    })
    await loop.say(agent, 'one')
    await loop.say(agent, 'two')
    await loop.say(agent, 'three')
    const last = requestsOf(loop, agent).at(-1)!
    // surface: user one, assistant one, user two, assistant(call-1, call-2), result 1, result 2, assistant two, user three
    expect(offered.map(n => n.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'user', 'assistant', 'user'])
    expect(required).toEqual([offered[7]!.seq])
    expect(last.messages.map(textOf)).toEqual([
      'one',
      'Calling a tool.|tool-call|tool-call',
      'tool-result',
      'tool-result',
      'three',
    ])
    const projection = projectionEvents(agent.session.events).at(-1)!.data
    expect(projection).toMatchObject({ turn: 3, step: 1, revision: 'probe', surfaceNodes: 8, includedNodes: 5 })
    expect(projection.include).toEqual([[offered[0]!.seq, offered[0]!.seq], [offered[3]!.seq, offered[5]!.seq], [offered[7]!.seq, offered[7]!.seq]])
    expectRequestsRebuiltFromLog(loop, agent)
  })

  it('requires the turn’s own input on every step, and the tool unit a step continues', async () => {
    const loop = await bootLoop(dsh, {
      script: [toolCallReply([{ id: 'call-a', name: 'echo', args: { text: 'a' } }]), textReply('done')],
    })
    const agent = loop.create('continuing')
    const steps: { step: number; required: string[] }[] = []
    agent.ctx.on('agent/context', async ({ step, nodes, requiredSeqs }, next) => {
      await next()
      steps.push({ step, required: requiredSeqs.map(seq => textOf(nodes.find(n => n.seq === seq)!.message)) })
      return { include: [] }
    })
    await loop.say(agent, 'use the tool')
    expect(steps).toEqual([
      { step: 1, required: ['use the tool'] },
      { step: 2, required: ['use the tool', 'Calling a tool.|tool-call', 'tool-result'] },
    ])
    expect(requestsOf(loop, agent).map(r => r.messages.map(textOf))).toEqual([
      ['use the tool'],
      ['use the tool', 'Calling a tool.|tool-call', 'tool-result'],
    ])
    expectRequestsRebuiltFromLog(loop, agent)
  })
})

describe('selection only (invariant 3)', () => {
  it('sends only durable messages: extra result fields and mutated payloads add nothing', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('selection-only')
    const mutations: string[] = []
    agent.ctx.on('agent/context', async (payload, next) => {
      const all = await next()
      const forged = { seq: 10_000, message: loop.user('forged') }
      for (const attempt of [
        () => (payload.nodes as unknown as unknown[]).push(forged),
        () => { (payload.nodes[0] as { seq: number }).seq = 10_000 },
        () => (payload.requiredSeqs as unknown as number[]).push(10_000),
      ]) {
        try {
          attempt()
        } catch (error) {
          mutations.push((error as Error).name)
        }
      }
      return { ...all, include: all.include.slice(-1), revision: 'last-1', messages: [forged.message] } as ContextSelection
    })
    await loop.say(agent, 'first')
    await loop.say(agent, 'second')
    // The nodes and the required seqs are frozen; the node list is the host's own, read-only by type: a write lands in
    // what later listeners are offered, never in a request, which the host resolves through its own index.
    expect(mutations).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError'])
    const derived = agent.session.deriveMessages()
    for (const request of requestsOf(loop, agent)) {
      for (const message of request.messages) expect(derived).toContain(message)
    }
    expect(requestsOf(loop, agent).at(-1)!.messages.map(textOf)).toEqual(['second'])
  })
})

describe('the request/projection record (invariant 4)', () => {
  it('logs a non-default projection before the request and nothing for the default one', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('record')
    let mode: 'next' | 'all-explicit' | 'last' = 'next'
    agent.ctx.on('agent/context', async ({ nodes }, next) => {
      const all = await next()
      if (mode === 'next') return all
      if (mode === 'all-explicit') return { include: nodes.map(n => n.seq).reverse(), revision: 'everything' }
      return { include: all.include.slice(-1), revision: 'last-1' }
    })
    await loop.say(agent, 'one')
    mode = 'all-explicit'
    await loop.say(agent, 'two')
    expect(projectionEvents(agent.session.events)).toEqual([])
    mode = 'last'
    await loop.say(agent, 'three')
    const events = agent.session.events
    const [projection] = projectionEvents(events)
    expect(projection!.data).toEqual({ turn: 3, step: 1, generation: 0, include: [[projection!.data.include[0]![0], projection!.data.include[0]![0]]], revision: 'last-1', surfaceNodes: 5, includedNodes: 1 })
    const stepStart = events.findLast(e => e.type === 'step/start')!.seq
    const firstChunk = events.find(e => e.type === 'assistant/chunk' && e.seq > stepStart)!.seq
    expect(projection!.seq).toBeGreaterThan(stepStart)
    expect(projection!.seq).toBeLessThan(firstChunk)
    expect(expectRequestsRebuiltFromLog(loop, agent)).toBe(3)
  })
})

describe('a surface that moves while listeners run (invariant 5)', () => {
  async function replacingLoop(replacements: number) {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create(`moving-${replacements}`)
    let remaining = replacements
    let calls = 0
    agent.ctx.on('agent/context', async ({ nodes }, next) => {
      calls++
      const all = await next()
      if (remaining > 0 && nodes.length > 1) {
        remaining--
        const surface = agent.session.surface.nodes
        agent.session.append('user/message', loop.user(`summary ${remaining}`), {
          surfaceOp: { op: 'replace', start: surface[0]!, end: surface.at(-2)! },
          sourceEventSeqs: surface.slice(0, -1),
        })
      }
      return { include: all.include.slice(-1), revision: 'tail' }
    })
    return { loop, agent, calls: () => calls }
  }

  it('recomputes once over the replaced surface and never sends stale seqs', async () => {
    const { loop, agent, calls } = await replacingLoop(1)
    await loop.say(agent, 'one')
    await loop.say(agent, 'two')
    expect(calls()).toBe(3)
    expect(loop.errors.map(e => String(e.error))).toEqual([])
    const projection = projectionEvents(agent.session.events).at(-1)!.data
    expect(projection.generation).toBe(1)
    expect(requestsOf(loop, agent).at(-1)!.messages.map(textOf)).toEqual(['two'])
    expectRequestsRebuiltFromLog(loop, agent)
  })

  it('rejects the step when the surface moves again during the recompute', async () => {
    const { loop, agent } = await replacingLoop(2)
    await loop.say(agent, 'one')
    await loop.say(agent, 'two')
    expect(loop.errors.map(e => (e.error as { code?: string }).code)).toEqual(['surface-changed'])
    expect(String(loop.errors[0]!.error)).toMatch(/agent "moving-2" \(revision "tail"\) saw the surface change while its listeners ran, twice/)
    expect(requestsOf(loop, agent)).toHaveLength(1)
    const end = agent.session.events.findLast(e => e.type === 'turn/end')!
    expect(end.data).toMatchObject({ turn: 2, reason: { kind: 'error' } })
    expectRequestsRebuiltFromLog(loop, agent)
  })
})
