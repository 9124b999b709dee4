/**
 * Safe selection (RFC 0001 invariants 2, 5 and 7): whatever a listener returns, the request stays answerable — it
 * opens with user input, carries the turn's own input and the newest runtime context, and keeps tool units whole —
 * every listener form works, a pinned seq a compaction replaced never bricks the agent, and an aborted step is a fence.
 */

import { setTimeout } from 'node:timers/promises'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { projectionEvents } from '@dsh-seam/agent-context'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh, textReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { isSummarization } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { expectEveryRequestReplayed, loopRequests } from '../compaction/support.ts'
import { aborted, expectAnswerable, expectRequestsRebuiltFromLog, listenerLatch, requestsOf, textOf } from './support.ts'

const dsh = await patchedDsh()

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /** A listener's own log-only record, written after its turn was aborted. */
    'plugin/late': { note: string }
  }
}

async function converse(loop: BootedLoop, agent: Agent, turns: number): Promise<string[]> {
  const inputs: string[] = []
  for (let turn = 1; turn <= turns; turn++) {
    const text = conversationTurn(turn)
    inputs.push(text)
    await loop.say(agent, text)
  }
  return inputs
}

/** The turn number of every request the adapter received for an agent, from the log's step/starts. */
function requestTurns(agent: Agent): number[] {
  return agent.session.events.filter(e => e.type === 'assistant/chunk' && e.data.chunk.type === 'finish').map(e => (e.data as { turn: number }).turn)
}

describe('answerable requests (invariant 2)', () => {
  it.each([
    ['keep the last 2 nodes', keepLastNodes(2)],
    ['the README example, the last 20 nodes', keepLastNodes(20, 'last-20')],
  ])('%s: every request of a 30-turn session with tool calls opens with user input and carries the turn’s input', async (_name, listener) => {
    const loop = await bootLoop(dsh, { fallback: conversationReply() })
    const agent = loop.create('answerable')
    agent.ctx.on('agent/context', listener)
    const inputs = await converse(loop, agent, 30)
    expect(loop.errors).toEqual([])
    const sent = requestsOf(loop, agent)
    const turns = requestTurns(agent)
    expect(sent).toHaveLength(40)
    sent.forEach((request, i) => expectAnswerable(request, inputs[(turns[i] as number) - 1] as string))
    expect(projectionEvents(agent.session.events).length).toBeGreaterThan(20)
    expectRequestsRebuiltFromLog(loop, agent)
  })

  it('keeps the newest runtime-context snapshot of each source although DSH emits it only when it changes', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('runtime-context')
    let cwd = '/work/first'
    agent.ctx.systemPrompt.context({ name: 'cwd', order: 0, text: () => `cwd=${cwd}` })
    agent.ctx.on('agent/context', keepLastNodes(1))
    for (const text of ['one', 'two', 'three']) await loop.say(agent, text)
    cwd = '/work/second'
    for (const text of ['four', 'five']) await loop.say(agent, text)
    expect(loop.errors).toEqual([])
    const snapshots = agent.session.events.filter(e => e.type === 'user/message' && textOf(e.data).includes('cwd='))
    expect(snapshots).toHaveLength(2)
    const sent = requestsOf(loop, agent).map(request => request.messages.map(textOf))
    for (const messages of sent.slice(0, 3)) expect(messages.filter(text => text.includes('cwd=/work/first'))).toHaveLength(1)
    for (const messages of sent.slice(3)) {
      expect(messages.filter(text => text.includes('cwd=/work/second'))).toHaveLength(1)
      expect(messages.some(text => text.includes('cwd=/work/first'))).toBe(false)
    }
    expect(sent.at(-1)).toHaveLength(2)
    expect(sent.at(-1)![0]).toMatch(/^Current runtime context\..*cwd=\/work\/second$/s)
    expect(sent.at(-1)![1]).toBe('five')
    expectRequestsRebuiltFromLog(loop, agent)
  })
})

describe('every listener form works (invariant 1)', () => {
  const forms: [name: string, install: (agent: Agent) => void][] = [
    ['a synchronous listener without next()', agent => agent.ctx.on('agent/context', (({ nodes }: { nodes: readonly { seq: number }[] }) => ({ include: nodes.slice(-1).map(node => node.seq), revision: 'sync' })) as never)],
    ['a synchronous listener returning next()', agent => agent.ctx.on('agent/context', (_payload, next) => next())],
    ['an async listener without next()', agent => agent.ctx.on('agent/context', async ({ nodes }) => ({ include: nodes.slice(-1).map(node => node.seq), revision: 'async' }))],
  ]

  it.each(forms)('%s completes every turn and every request rebuilds from the log', async (_name, install) => {
    const loop = await bootLoop(dsh, { fallback: conversationReply() })
    const agent = loop.create('forms')
    install(agent)
    const inputs = await converse(loop, agent, 4)
    expect(loop.errors.map(e => String(e.error))).toEqual([])
    const turns = requestTurns(agent)
    requestsOf(loop, agent).forEach((request, i) => expectAnswerable(request, inputs[(turns[i] as number) - 1] as string))
    expectRequestsRebuiltFromLog(loop, agent)
  })
})

describe('stale seqs never brick an agent (invariant 5)', () => {
  /** Pin the first node the listener ever saw, plus the last node. */
  function pinFirst(agent: Agent, rest: 'tail' | 'all-but-the-last-reply' = 'tail'): { pinned: () => number | undefined } {
    let pinned: number | undefined
    agent.ctx.on('agent/context', async ({ nodes }, next) => {
      const all = await next()
      pinned ??= nodes[0]!.seq
      const others = rest === 'tail' ? [nodes.at(-1)!.seq] : all.include.filter(seq => nodes.length < 3 || seq !== nodes.at(-2)!.seq)
      return { include: [pinned, ...others], revision: `pin-first+${rest}` }
    })
    return { pinned: () => pinned }
  }

  it('a pin that DSH’s compactNow replaced resolves to the summary on every later turn', async () => {
    const loop = await bootLoop(dsh, {
      fallback: request => isSummarization(request) ? textReply('SUMMARY of the first turns') : textReply(`answer ${'a long reply. '.repeat(30)}`),
      plugins: [[dsh.compactionBasic.default, { thresholdRatio: 0.99 }]],
    })
    const agent = loop.create('stale-basic')
    const { pinned } = pinFirst(agent)
    for (const text of ['first question', 'second', 'third']) await loop.say(agent, text)
    const result = await loop.ctx.compaction.compactNow(agent, AbortSignal.timeout(30_000))
    expect(result?.shadowedSeqs).toContain(pinned())
    for (const text of ['fourth', 'fifth', 'sixth']) await loop.say(agent, text)
    expect(loop.errors.map(e => String(e.error))).toEqual([])
    const after = projectionEvents(agent.session.events).filter(p => p.data.generation === 1)
    expect(after.map(p => p.data.stale)).toEqual([1, 1, 1])
    const sent = loopRequests(loop, agent)
    for (const request of sent.slice(3)) expect(textOf(request.messages[0]!)).toContain('SUMMARY of the first turns')
    expect(expectEveryRequestReplayed(agent.session.events, sent)).toBe(6)
  })

  it('a pin that projection-aware compaction replaced mid-turn resolves, and later turns complete', async () => {
    const { ProjectionAwareCompactionEngine } = await import('@dsh-seam/compaction-effective-projection')
    const loop = await bootLoop(dsh, {
      contextWindow: 1500,
      fallback: request => isSummarization(request) ? textReply('SUMMARY') : textReply(`answer ${'a long reply. '.repeat(20)}`),
      plugins: [[ProjectionAwareCompactionEngine, {}]],
    })
    const agent = loop.create('stale-projected')
    pinFirst(agent, 'all-but-the-last-reply')
    for (let turn = 1; turn <= 12; turn++) await loop.say(agent, `turn ${turn} ${'user words. '.repeat(20)}`)
    expect(loop.errors.map(e => String(e.error))).toEqual([])
    expect(agent.session.surface.replaceGeneration).toBeGreaterThan(0)
    expect(projectionEvents(agent.session.events).some(p => (p.data.stale ?? 0) > 0)).toBe(true)
    expect(agent.session.events.filter(e => e.type === 'turn/end').every(e => e.data.reason.kind === 'completed')).toBe(true)
    expectEveryRequestReplayed(agent.session.events, loopRequests(loop, agent))
  })

  it('a seq that never was a node still fails the step with unknown-seq', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('never-a-node')
    agent.ctx.on('agent/context', async () => ({ include: [0] }))
    await loop.say(agent, 'hello')
    expect(loop.errors.map(e => (e.error as { code?: string }).code)).toEqual(['unknown-seq'])
  })
})

describe('abort is a fence (invariant 7)', () => {
  it('a listener resolving after the abort: its result is discarded, nothing is logged, the next turn is unaffected', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('late-resolving')
    const latch = listenerLatch()
    let late = true
    agent.ctx.on('agent/context', async ({ signal, nodes }, next) => {
      if (!late) return next()
      latch.enter()
      await aborted(signal)
      await setTimeout(20)
      return { include: nodes.slice(-1).map(node => node.seq), revision: 'late' }
    })
    await latch.cancelInside(loop, agent, 'hang')
    expect(requestsOf(loop, agent)).toEqual([])
    expect(projectionEvents(agent.session.events)).toEqual([])
    expect(agent.session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'aborted' } } })
    late = false
    await loop.say(agent, 'after')
    expect(loop.errors).toEqual([])
    expect(requestsOf(loop, agent).map(r => r.messages.map(textOf))).toEqual([['hang', 'after']])
    expectRequestsRebuiltFromLog(loop, agent)
  })

  it('a listener appending after the abort: its event lands inside the aborted turn, before turn/end', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('late-appending')
    const latch = listenerLatch()
    agent.ctx.on('agent/context', async ({ signal }, next) => {
      if (agent.session.events.some(e => e.type === 'plugin/late')) return next()
      latch.enter()
      await aborted(signal)
      await setTimeout(20)
      agent.session.append('plugin/late', { note: 'written after the abort' })
      return next()
    })
    await latch.cancelInside(loop, agent, 'hang')
    const types = agent.session.events.map(e => e.type as string)
    expect(types.slice(-3)).toEqual(['plugin/late', 'step/end', 'turn/end'])
    const logLength = types.length
    await setTimeout(50)
    expect(agent.session.events).toHaveLength(logLength)
    await loop.say(agent, 'after')
    expect(loop.errors).toEqual([])
    expect(requestsOf(loop, agent)).toHaveLength(1)
    expectRequestsRebuiltFromLog(loop, agent)
  })
})
