/**
 * Bad listener output is a listener bug: a typed AgentContextError naming the agent, the revision and the offending
 * values; nothing reaches the model; the turn ends with an error and the log stays replayable.
 */

import { AgentContextError, projectionEvents } from '@dsh-context/agent-context'
import { bootLoop, patchedDsh, textReply } from '@dsh-context/loop-testkit'
import { describe, expect, it } from 'vitest'
import { aborted, expectRequestsRebuiltFromLog, listenerLatch, requestsOf } from './support.ts'

const dsh = await patchedDsh()

type Hostile = (nodes: readonly { seq: number }[]) => unknown

const throwingGetter = { get include(): never { throw new Error('getter exploded') } }
const nullProto = Object.create(null) as object

const cases: { name: string; result: Hostile; code: string; message: RegExp }[] = [
  { name: 'an unknown seq', result: nodes => ({ include: [nodes[0]!.seq, 999_999], revision: 'r1' }), code: 'unknown-seq', message: /agent "hostile-0" \(revision "r1"\) named seqs that never were message-bearing nodes of its surface: 999999$/ },
  { name: 'a non-surface seq of its own log', result: () => ({ include: [1], revision: 'r2' }), code: 'unknown-seq', message: /\(revision "r2"\) named seqs .*: 1$/ },
  { name: 'a non-array include', result: () => ({ include: '4,5', revision: 'r3' }), code: 'invalid-selection', message: /\(revision "r3"\) returned an include that is not an array: "4,5"$/ },
  { name: 'a non-object result', result: () => 42, code: 'invalid-selection', message: /returned a result that is not an object with an include array: 42$/ },
  { name: 'non-integer seqs', result: nodes => ({ include: [nodes[0]!.seq + 0.5, Number.NaN, '4', -1] }), code: 'invalid-seq', message: /returned include values that are not seqs \(safe non-negative integers\): \d+\.5, NaN, "4", -1$/ },
  { name: 'a non-string revision', result: nodes => ({ include: [nodes[0]!.seq], revision: 7 }), code: 'invalid-revision', message: /returned a revision that is not a printable string of at most 200 characters: 7$/ },
  { name: 'a thrown error', result: () => { throw new RangeError('policy exploded') }, code: 'listener-failed', message: /listener failed: RangeError: policy exploded$/ },
  { name: 'a rejected promise', result: () => Promise.reject(new Error('async policy exploded')), code: 'listener-failed', message: /listener failed: Error: async policy exploded$/ },
  { name: 'a throwing include getter', result: () => throwingGetter, code: 'invalid-selection', message: /returned a result that cannot be read \(Error: getter exploded\)$/ },
  { name: 'a thrown null-prototype object', result: () => { throw nullProto }, code: 'listener-failed', message: /listener failed: \{\}$/ },
  { name: 'a revision of 1 MB', result: nodes => ({ include: [nodes[0]!.seq], revision: 'r'.repeat(1_000_000) }), code: 'invalid-revision', message: /\(1000000 characters\)"$/ },
  { name: 'a revision with a control character', result: nodes => ({ include: [nodes[0]!.seq], revision: 'ok\u001b[2Jforged' }), code: 'invalid-revision', message: /not a printable string/ },
]

describe('hostile agent/context listeners', () => {
  it.each(cases.map((c, i) => ({ ...c, i })))('$name ends the turn with AgentContextError($code)', async ({ i, result, code, message }) => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create(`hostile-${i}`)
    let hostile = false
    agent.ctx.on('agent/context', async ({ nodes }, next) => {
      const all = await next()
      return hostile ? await result(nodes) as typeof all : all
    })
    await loop.say(agent, 'fine')
    hostile = true
    await loop.say(agent, 'bad')
    expect(loop.errors).toHaveLength(1)
    const error = loop.errors[0]!.error as AgentContextError
    expect(error).toBeInstanceOf(AgentContextError)
    expect(error.code).toBe(code)
    expect(error.agent).toBe(`hostile-${i}`)
    expect(error.message).toMatch(message)
    expect(requestsOf(loop, agent)).toHaveLength(1)
    expect(projectionEvents(agent.session.events)).toEqual([])
    const end = agent.session.events.findLast(e => e.type === 'turn/end')!
    expect(end.data.reason).toMatchObject({ kind: 'error', error: { code: 'UNKNOWN' } })
    expect((end.data.reason as { error: { message: string } }).error.message).toContain(`agent/context [${code}]`)
    hostile = false
    await loop.say(agent, 'recovered')
    expect(requestsOf(loop, agent)).toHaveLength(2)
    const replayed = dsh.session.Session.create(dsh.session.SessionId('replayed'), structuredClone(agent.session.events))
    expect(replayed.deriveMessages()).toEqual(agent.session.deriveMessages())
    expect(expectRequestsRebuiltFromLog(loop, agent)).toBe(2)
  })

  it('a listener that honours the abort signal ends the step as aborted; nothing is sent or logged', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('honours-abort')
    const latch = listenerLatch()
    agent.ctx.on('agent/context', async ({ signal }) => {
      latch.enter()
      await aborted(signal)
      throw signal.reason as Error
    })
    await latch.cancelInside(loop, agent, 'hang')
    expect(requestsOf(loop, agent)).toEqual([])
    expect(projectionEvents(agent.session.events)).toEqual([])
    const end = agent.session.events.findLast(e => e.type === 'turn/end')!
    expect(end.data.reason).toMatchObject({ kind: 'aborted', reason: { kind: 'user' } })
    const replayed = dsh.session.Session.create(dsh.session.SessionId('replayed'), structuredClone(agent.session.events))
    expect(replayed.events.slice(0, -1).map(e => e.type)).toEqual(agent.session.events.map(e => e.type))
    expect(replayed.events.at(-1)!.type).toBe('session/end-seed')
  })
})
