import type { GenerateOptions, StreamChunk } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { bootLoop, failureReply, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import type { ReplayErrorCode } from '../src/check.ts'
import { REQUEST_PROJECTION_FORM, ReplayError } from '../src/check.ts'
import { projectionEvents } from '../src/projection.ts'
import type { ReplayedRequest } from '../src/replay.ts'
import { diffRequest, opensRequest, replayRequests, RequestReplay } from '../src/replay.ts'
import { expectFaithfulReplay, keepLast, loopRequests } from './oracle.ts'

const toolScript = [
  toolCallReply([{ id: 'c1', name: 'echo', args: { text: 'one' } }]),
  textReply('done'),
  toolCallReply([{ id: 'c2', name: 'echo', args: { text: 'two' } }, { id: 'c3', name: 'echo', args: { text: 'three' } }]),
  textReply('done again'),
  textReply('third turn'),
]

async function converse(project: boolean): Promise<{ loop: BootedLoop; events: readonly SessionEvent[] }> {
  const loop = await bootLoop(await patchedDsh(), { script: [...toolScript] })
  const agent = loop.create(project ? 'keep-last' : 'plain')
  if (project) keepLast(agent, 2)
  for (const text of ['go', 'again', 'once more']) await loop.say(agent, text)
  expect(loop.errors).toEqual([])
  return { loop, events: agent.session.events }
}


describe('replayRequests on real loop logs', () => {
  it('rebuilds every request of a loop without a listener, tool round trips and three turns', async () => {
    const { loop, events } = await converse(false)
    const replayed = expectFaithfulReplay(loop, events)
    expect(replayed.map(r => [r.turn, r.step])).toEqual([[1, 1], [1, 2], [2, 1], [2, 2], [3, 1]])
    expect(replayed.every(r => r.projection === undefined && r.messages.length === r.surfaceNodes)).toBe(true)
  })

  it('rebuilds every request of a loop whose listener keeps the last 2 nodes', async () => {
    const { loop, events } = await converse(true)
    const replayed = expectFaithfulReplay(loop, events)
    expect(replayed).toHaveLength(5)
    const projected = replayed.filter(r => r.projection !== undefined)
    expect(projected.length).toBeGreaterThan(0)
    for (const r of projected) {
      expect(r.projection?.revision).toBe('keep-last-2')
      expect(r.messages.length).toBe(r.projection?.includedNodes)
      expect(r.messages.length).toBeLessThan(r.surfaceNodes)
    }
    expect(projected.map(r => r.projection)).toEqual(projectionEvents(events).map(event => event.data))
  })

  it('leaves an empty-content reply on the surface but out of the nodes and counts', async () => {
    const emptyReply = [{ type: 'finish', reason: { kind: 'stop' } }] as StreamChunk[]
    const loop = await bootLoop(await patchedDsh(), { script: [emptyReply, textReply('second')] })
    const agent = loop.create('empty-reply')
    keepLast(agent, 1)
    await loop.say(agent, 'go')
    await loop.say(agent, 'again')
    expect(loop.errors).toEqual([])
    const empty = agent.session.events.find(event => event.type === 'assistant/message') as SessionEvent<'assistant/message'>
    expect(empty.data.message.content).toEqual([])
    expect(agent.session.surface.nodes).toContain(empty.seq)

    const [, second] = expectFaithfulReplay(loop, agent.session.events)
    expect(second?.surfaceNodes).toBe(2)
    expect(second?.projection).toMatchObject({ surfaceNodes: 2, includedNodes: 1 })
  })

  it('rebuilds requests after a compaction replaced a surface range, with a projection over the replaced surface', async () => {
    const dsh = await patchedDsh()
    const summarizing = (request: GenerateOptions): boolean =>
      request.messages.at(-1)?.content.some(block => block.type === 'text' && block.text.includes('acting as a compaction engine')) === true
    const loop = await bootLoop(dsh, {
      contextWindow: 2000,
      fallback: request => summarizing(request) ? textReply('SUMMARY of earlier turns') : textReply('x'.repeat(1200)),
      plugins: [[dsh.compactionBasic.default, { thresholdRatio: 0.5, retainRatio: 0.1 }]],
    })
    const agent = loop.create('compacted')
    agent.ctx.on('agent/context', async (payload, next) => {
      const all = await next()
      const required = new Set(payload.requiredSeqs)
      const dropped = payload.nodes.find(node => !required.has(node.seq) && node.message.role === 'assistant')?.seq
      return { include: all.include.filter(seq => seq !== dropped), revision: 'drop-oldest' }
    })
    for (const text of ['one', 'two', 'three', 'four', 'five']) await loop.say(agent, text)
    expect(loop.errors).toEqual([])
    expect(agent.session.surface.replaceGeneration).toBeGreaterThan(0)

    const replayed = expectFaithfulReplay(loop, agent.session.events)
    const after = replayed.filter(r => r.generation > 0)
    expect(after.length).toBeGreaterThan(0)
    expect(after.some(r => r.projection !== undefined)).toBe(true)
  })

  // Without a listener nothing is logged between the failed request's finish chunk and the retry's first chunk.
  it.each([['with', true], ['without', false]])('replays both requests of a step retried after a context-window overflow, %s a listener', async (_with, project) => {
    const loop = await bootLoop(await patchedDsh(), {
      script: [textReply('hi'), failureReply({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' }), textReply('ok')],
    })
    const agent = loop.create('retry')
    if (project) keepLast(agent, 1)
    agent.ctx.on('agent/request-error', async (payload, next) =>
      payload.failure.code === 'CONTEXT_WINDOW_EXCEEDED' ? { kind: 'retry' } : next())
    await loop.say(agent, 'hello')
    await loop.say(agent, 'more')
    expect(loop.errors).toEqual([])

    const replayed = expectFaithfulReplay(loop, agent.session.events)
    expect(replayed.map(r => [r.turn, r.step])).toEqual([[1, 1], [2, 1], [2, 1]])
    const [, failed, retried] = replayed
    const failure = agent.session.events[failed?.seq as number] as SessionEvent<'assistant/chunk'>
    expect(failure.data.chunk).toMatchObject({ type: 'finish', reason: { kind: 'error' } })
    expect(retried?.projection !== undefined).toBe(project)
    expect(retried?.messages).toHaveLength(project ? 1 : 3)
  })
})

describe('replayRequests on tampered logs', () => {
  type Tamper = (event: SessionEvent<'request/projection'>, events: readonly SessionEvent[]) => void
  // The last request (turn 3, keep-last-2) sends "again" (the opening), then "done again" and "once more".
  const cases: [name: string, code: ReplayErrorCode, tamper: Tamper][] = [
    ['its generation changed', 'projection-generation', event => { event.data.generation += 1 }],
    ['its runs out of surface order', 'unordered-ranges', event => { event.data.include = [...event.data.include].reverse() }],
    ['its included count changed', 'projection-counts', event => { event.data.includedNodes += 1 }],
    ['its surface count changed', 'projection-counts', event => { event.data.surfaceNodes -= 1 }],
    ['its last run ending past the surface', 'foreign-seq', event => { (event.data.include.at(-1) as [number, number])[1] = 999_999 }],
    ['its step changed', 'projection-position', event => { event.data.step += 1 }],
    ['its include not runs', 'malformed-projection', event => { (event.data as { include: unknown }).include = [7] }],
    ['its data null', 'malformed-projection', event => { (event as { data: unknown }).data = null }],
  ]

  it.each(cases)('names the request/projection seq when %s', async (_name, code, tamper) => {
    const { events } = await converse(true)
    const copy = structuredClone(events) as SessionEvent[]
    const target = projectionEvents(copy).at(-1) as SessionEvent<'request/projection'>
    tamper(target, copy)
    const error = (() => {
      try {
        replayRequests(copy)
      } catch (caught: unknown) {
        return caught
      }
      return undefined
    })()
    expect(error).toBeInstanceOf(ReplayError)
    expect((error as ReplayError).code).toBe(code)
    expect((error as ReplayError).seq).toBe(target.seq)
    expect((error as ReplayError).message).toContain(`seq ${target.seq}`)
    if (code !== 'malformed-projection') expect((error as ReplayError).request).toMatchObject({ turn: 3, revision: 'keep-last-2' })
    // A malformed projection is told the one shape text Session.append's refusal also quotes.
    else expect((error as ReplayError).message).toContain(REQUEST_PROJECTION_FORM)
  })
})

describe('RequestReplay.push', () => {
  it('folds nothing when a request does not decode, so the same event can be fed again', async () => {
    const { events } = await converse(true)
    const copy = structuredClone(events) as SessionEvent[]
    const target = projectionEvents(copy).at(-1) as SessionEvent<'request/projection'>
    const chunk = copy.find(event => event.seq > target.seq && event.type === 'assistant/chunk') as SessionEvent
    target.data.includedNodes += 1
    const replay = new RequestReplay()
    const opened: ReplayedRequest[] = []
    for (const event of copy.slice(0, chunk.seq)) {
      const request = replay.push(event)
      if (request !== undefined) opened.push(request)
    }
    const before = replay.last
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(() => replay.push(chunk)).toThrow(expect.objectContaining({ code: 'projection-counts', seq: target.seq }))
      expect(replay.last).toBe(before)
    }
    target.data.includedNodes -= 1
    for (const event of copy.slice(chunk.seq)) {
      const request = replay.push(event)
      if (request !== undefined) opened.push(request)
    }
    expect(opened.map(request => JSON.stringify(request))).toEqual(replayRequests(events).map(request => JSON.stringify(request)))
  })
})

/** Seq of the first assistant message with tool calls after `after`. */
const callOf = (events: readonly SessionEvent[], after: number): number =>
  (events.find(e => e.seq > after && e.type === 'assistant/message' && e.data.message.content.some(b => b.type === 'tool-call')) as SessionEvent).seq
/** The last seq a projection includes. */
const tail = (event: SessionEvent<'request/projection'>): number => (event.data.include.at(-1) as [number, number])[1]

/** Event types that bear a message on this conversation's surface (no compaction, no empty replies). */
const BEARING: ReadonlySet<string> = new Set(['user/message', 'assistant/message', 'tool/result'])

describe('replayRequests on logs written under another host policy', () => {
  type Rewrite = (event: SessionEvent<'request/projection'>, events: readonly SessionEvent[]) => void
  // What a host with another required set, unit rule or opening rule could have written: replay decodes it as logged.
  const cases: [name: string, rewrite: Rewrite][] = [
    ['the opening user message dropped', event => {
      event.data.include = event.data.include.slice(1)
      event.data.includedNodes -= 1
    }],
    ['the turn\'s own input dropped', event => {
      const [first] = event.data.include[0] as [number, number]
      event.data.include = [[first, first]]
      event.data.includedNodes = 1
    }],
    ['a tool unit split', (event, events) => {
      const [first] = event.data.include[0] as [number, number]
      const call = callOf(events, first)
      event.data.include = [[first, call], [tail(event), tail(event)]]
      event.data.includedNodes = events.filter(e => e.seq >= first && e.seq <= call && BEARING.has(e.type)).length + 1
    }],
    ['a revision today\'s host would refuse (5,000 characters and a control character)', event => {
      event.data.revision = `\u001b[2J${'r'.repeat(5_000)}`
    }],
  ]

  it.each(cases)('rebuilds the request as logged when %s', async (_name, rewrite) => {
    const { events } = await converse(true)
    const copy = structuredClone(events) as SessionEvent[]
    const target = projectionEvents(copy).at(-1) as SessionEvent<'request/projection'>
    rewrite(target, copy)
    const last = replayRequests(copy).at(-1)
    expect(last?.projection).toEqual(target.data)
    expect(last?.messages).toHaveLength(target.data.includedNodes)
  })
})

describe('diffRequest', () => {
  it('names the first divergence between a sent request and its replay', async () => {
    const { loop, events } = await converse(true)
    const [first] = replayRequests(events)
    const [sent] = loopRequests(loop)
    if (first === undefined || sent === undefined) throw new Error('the loop sent no request')
    expect(diffRequest(first, sent)).toBeUndefined()
    expect(diffRequest(first, { ...sent, messages: sent.messages.slice(1) })).toMatch(/message 0 differs \(0 sent, 1 rebuilt\)/)
    expect(diffRequest(first, { ...sent, messages: [loop.user('forged')] })).toMatch(/message 0 differs \(1 sent, 1 rebuilt\): sent .*forged/)
    expect(diffRequest(first, { ...sent, model: 'other-model' })).toMatch(/model differs: sent "other-model", the log's request\/header has "fake-model"/)
    expect(diffRequest(first, { ...sent, system: 'another prompt' })).toMatch(/system differs: sent "another prompt"/)
    expect(diffRequest(first, { ...sent, tools: [] })).toMatch(/tools differs: sent \[\]/)
    expect(diffRequest(first, { ...sent, temperature: 0.5 })).toMatch(/temperature differs: sent 0.5, the log's request\/header has nothing/)
    expect(diffRequest({ ...first, header: undefined }, sent)).toMatch(/no request\/header precedes it/)
  })
})

describe('a plugin appending while a request streams', () => {
  it('does not split the request: the replay rebuilds what the provider received, one request per call', async () => {
    const loop = await bootLoop(await patchedDsh(), { script: [textReply('first answer'), textReply('second answer')] })
    const agent = loop.create('titled')
    keepLast(agent, 1)
    // As DSH's session-title plugin does: its append lands between two chunks of the main request's stream. The plugin
    // declares the event's data; it is not installed here.
    const appendTitle = agent.session.append.bind(agent.session) as (type: string, data: unknown) => unknown
    loop.ctx.on('llm/stream', (_options, next) => {
      const stream = next()
      return (async function* () {
        let first = true
        for await (const chunk of stream) {
          yield chunk
          if (first) appendTitle('session/title', { title: 'A title' })
          first = false
        }
      })()
    })
    await loop.say(agent, 'go')
    await loop.say(agent, 'again')
    expect(loop.errors).toEqual([])
    const { events } = agent.session
    const title = events.findIndex(event => (event.type as string) === 'session/title')
    expect(events[title - 1]?.type).toBe('assistant/chunk')
    expect(events[title + 1]?.type).toBe('assistant/chunk')
    expect(expectFaithfulReplay(loop, events)).toHaveLength(loop.adapter.requests.length)
  })
})

describe('opensRequest', () => {
  const chunk = (seq: number, step: number, type: 'text-delta' | 'finish'): SessionEvent<'assistant/chunk'> => ({
    type: 'assistant/chunk',
    seq,
    time: 0,
    data: { turn: 1, step, chunk: (type === 'finish' ? { type, reason: { kind: 'stop' } } : { type, index: 0, text: 'x' }) },
  })

  it('opens a request at the log\'s first chunk, a chunk after a finish chunk or a chunk of another step', () => {
    expect(opensRequest(chunk(0, 1, 'text-delta'), undefined)).toBe(true)
    expect(opensRequest(chunk(2, 1, 'text-delta'), chunk(1, 1, 'finish'))).toBe(true)
    expect(opensRequest(chunk(2, 2, 'text-delta'), chunk(1, 1, 'text-delta'))).toBe(true)
  })

  it('continues the request at a chunk after a non-finish chunk of the same step', () => {
    expect(opensRequest(chunk(2, 1, 'finish'), chunk(1, 1, 'text-delta'))).toBe(false)
    expect(opensRequest(chunk(2, 1, 'text-delta'), chunk(1, 1, 'text-delta'))).toBe(false)
  })
})
