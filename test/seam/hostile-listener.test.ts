/**
 * Bad listener output is a listener bug: a typed AgentContextError naming the agent, the revision and the offending
 * values; nothing reaches the model; the turn ends with an error and the log stays replayable.
 */

// The loop throws the patched dsh-agent-loop's class: a plugin catches the host's errors under DSH's name.
import { AgentContextError } from '@deepseek-ai/dsh-agent-loop'
import { projectionEvents } from '@dsh-seam/agent-context'
import { bootLoop, patchedDsh, textReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { aborted, expectRequestsRebuiltFromLog, listenerLatch, requestsOf } from './support.ts'

const dsh = await patchedDsh()

type Hostile = (nodes: readonly { seq: number }[]) => unknown

const nullProto = Object.create(null) as object

/** A value whose every trap throws: `instanceof`, inspection and string conversion all run one. */
const trapped = new Proxy({}, {
  getPrototypeOf: () => { throw new Error('trap') },
  get: () => { throw new Error('trap') },
  ownKeys: () => { throw new Error('trap') },
  getOwnPropertyDescriptor: () => { throw new Error('trap') },
})

const cases: { name: string; result: Hostile; code: string; message: RegExp }[] = [
  { name: 'an unknown seq', result: nodes => ({ include: [nodes[0]!.seq, 999_999], revision: 'r1' }), code: 'unknown-seq', message: /agent "hostile-0" \(revision "r1"\) named seqs that never were message-bearing nodes of its surface: 999999$/ },
  { name: 'a non-surface seq of its own log', result: () => ({ include: [1], revision: 'r2' }), code: 'unknown-seq', message: /\(revision "r2"\) named seqs .*: 1$/ },
  { name: 'numbers that are no seqs', result: nodes => ({ include: [nodes[0]!.seq + 0.5, Number.NaN, -1] }), code: 'unknown-seq', message: /named seqs that never were message-bearing nodes of its surface: \d+\.5, NaN, -1$/ },
  { name: 'a thrown error', result: () => { throw new RangeError('policy exploded') }, code: 'listener-failed', message: /agent "hostile-\d+" listener failed$/ },
  { name: 'a rejected promise', result: () => Promise.reject(new Error('async policy exploded')), code: 'listener-failed', message: /listener failed$/ },
  { name: 'a thrown null-prototype object', result: () => { throw nullProto }, code: 'listener-failed', message: /listener failed$/ },
  { name: 'a thrown proxy whose traps throw', result: () => { throw trapped }, code: 'listener-failed', message: /listener failed$/ },
  { name: 'a rejection with a proxy whose traps throw', result: () => Promise.reject(trapped), code: 'listener-failed', message: /listener failed$/ },
  { name: 'a revision of 1 MB', result: nodes => ({ include: [nodes[0]!.seq], revision: 'r'.repeat(1_000_000) }), code: 'invalid-revision', message: /\(1000000 code units\)"$/ },
  { name: 'a revision of 101 emoji', result: nodes => ({ include: [nodes[0]!.seq], revision: '🌊'.repeat(101) }), code: 'invalid-revision', message: /\(202 code units\)"$/ },
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

  it.each([
    ['a 100,000-character message', () => new Error('x'.repeat(100_000)), 'x'.repeat(100_000)],
    ['an error with a cause', () => new Error('outer', { cause: new Error('y'.repeat(200_000)) }), `outer: ${'y'.repeat(200_000)}`],
    ['a short error', () => new Error('boom'), 'boom'],
  ])('a listener that throws %s is the failure\'s cause, recorded in turn/end as DSH renders a cause chain', async (_name, thrown, rendered) => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('caused-failure')
    const error = thrown()
    agent.ctx.on('agent/context', () => { throw error })
    await loop.say(agent, 'hi')
    const end = agent.session.events.findLast(e => e.type === 'turn/end')!
    const { message } = (end.data.reason as { error: { message: string } }).error
    expect(message).toBe(`agent/context [listener-failed] for agent "caused-failure" listener failed: ${rendered}`)
    expect((loop.errors[0]!.error as AgentContextError).cause).toBe(error)
  })

  it('logs a failed listener through DSH\'s logger once, naming the agent and the code', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const warnings: string[] = []
    loop.ctx.logger.exporter({ levels: { default: 3 }, export: message => message.type === 'warn' && warnings.push(String(message.args[0])) })
    const agent = loop.create('logged-failure')
    agent.ctx.on('agent/context', () => { throw new Error('policy exploded') })
    await loop.say(agent, 'hi')
    expect(warnings.filter(line => line.startsWith('agent/context'))).toEqual(['agent/context [listener-failed] for agent "logged-failure" listener failed: Error: policy exploded'])
  })

  it('takes a revision of up to 200 UTF-16 code units: 100 emoji and a 200-character Chinese label are accepted and logged', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const agent = loop.create('code-unit-revision')
    const revisions = ['🌊'.repeat(100), 'r'.repeat(200), '记'.repeat(200)]
    await loop.say(agent, 'zero')
    let at = 0
    agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-1), revision: revisions[at++] as string }))
    for (const text of ['one', 'two', 'three']) await loop.say(agent, text)
    expect(loop.errors).toEqual([])
    expect(projectionEvents(agent.session.events).map(e => e.data.revision)).toEqual(revisions)
    expect(expectRequestsRebuiltFromLog(loop, agent)).toBe(4)
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
