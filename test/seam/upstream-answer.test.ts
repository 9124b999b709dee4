/**
 * Upstream's note "Plugin-owned message projections" (2026-09-11) rejects transforming only the outgoing request
 * because "compaction, fork, offline replay, and request invariants also derive messages". One describe per consumer,
 * on the real patched rc.8 loop with DSH's invariants on.
 *
 * rc.8 has no host fork command in this workspace; DSH's host forks (rc.2 `packages/host/apiproxy/src/api-proxy.ts`,
 * `sessions.fork`) by cutting the source log after its last completed turn (and the out-of-band events up to the next
 * `turn/start`) and creating an agent on a new session seeded with that prefix (`ctx.agents.create({ seed, meta:
 * { parentSession, seedLength } })`). {@link forkAgent} does exactly that on rc.8, and checks the seed against rc.8's
 * own `ctx.sessions.fork`.
 *
 * Covered elsewhere and cited, not repeated: a projected conversation passing DSH's invariant and forged projections
 * failing it (request-invariant.test.ts); replay of a persisted JSONL after a crash (reliability/crash.test.ts);
 * projection-aware compaction measuring what is sent (compaction/projected-pressure.test.ts).
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { diffRequest, projectionEvents, readSessionLog, replayRequests } from '@dsh-seam/agent-context'
import type { BootedLoop, BootOptions, ContextListener } from '@dsh-seam/loop-testkit'
import { bootLoop, keepLastNodes, patchedDsh, sessionLogPath, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import type { EngineChoice } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { bootScenario, keepLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests } from '../compaction/support.ts'
import { requestsOf, textOf } from './support.ts'

const dsh = await patchedDsh()
const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })

/** The prefix DSH's host seeds a fork with: through the last `turn/end` and the out-of-band events after it. */
function forkSeed(events: readonly SessionEvent[]): SessionEvent[] {
  const end = events.findLast(event => event.type === 'turn/end')
  if (end === undefined) throw new Error('no completed turn to fork from')
  let cut = end.seq + 1
  while (cut < events.length && events[cut]?.type !== 'turn/start') cut++
  return structuredClone(events.slice(0, cut))
}

/**
 * Fork `parent` as DSH's host does: an agent on a new session seeded with the completed-turn prefix.
 * @param seed - the seed; the host's cut of the parent's log unless a test alters it.
 * @param listener - an `agent/context` listener the fork's setup installs (as a preset's setup would), if any.
 */
async function forkAgent(loop: BootedLoop, parent: Agent, id: string, seed = forkSeed(parent.session.events), listener?: ContextListener): Promise<Agent> {
  const { agent } = await loop.ctx.agents.create({
    sessionId: dsh.session.SessionId(id),
    seed,
    meta: { parentSession: parent.session.id, seedLength: seed.length },
    agentOptions: { provider: 'fake', model: 'fake-model' },
    ...listener === undefined ? {} : { setup: ctx => { ctx.on('agent/context', listener) } },
  })
  return agent
}

/** A parent whose requests a keep-last-2-nodes listener projected, over three turns with a tool call. */
async function projectedParent(options: BootOptions = {}): Promise<{ loop: BootedLoop; parent: Agent }> {
  const loop = await bootLoop(dsh, {
    script: [textReply('one'), toolCallReply([{ id: 'call-1', name: 'echo', args: { text: 'x' } }]), textReply('two'), textReply('three')],
    fallback: textReply('fork reply'),
    ...options,
  })
  const parent = loop.create('parent')
  parent.ctx.on('agent/context', keepLastNodes(2))
  for (const text of ['first', 'second', 'third']) await loop.say(parent, text)
  expect(projectionEvents(parent.session.events).length).toBeGreaterThan(0)
  return { loop, parent }
}

/** Assert that `requests`, as the provider received them, are what the log `events` replays, one by one. */
function expectReplayed(events: readonly SessionEvent[], requests: readonly GenerateOptions[]): void {
  const replayed = replayRequests(events)
  expect(replayed.map((request, i) => diffRequest(request, requests[i] as GenerateOptions))).toEqual(requests.map(() => undefined))
  expect(replayed).toHaveLength(requests.length)
}

describe('fork: a session forked from a projected one', () => {
  it('sends, on the fork’s first request, what the fork selects: every node without a listener, the listener’s choice with one; DSH’s invariants hold on both', async () => {
    const { loop, parent } = await projectedParent()
    const seed = forkSeed(parent.session.events)
    // The host's cut is the whole parent log here (it ends on a completed turn), as rc.8's own session fork copies it,
    // request/projection events included; the child then writes its `session/end-seed` boundary.
    const sessionFork = loop.ctx.sessions.fork(parent.session, undefined, dsh.session.SessionId('session-level-fork'))
    expect(JSON.stringify(sessionFork.events.slice(0, seed.length))).toBe(JSON.stringify(seed))
    expect(sessionFork.events.slice(seed.length).map(e => e.type)).toEqual(['session/end-seed'])
    expect(projectionEvents(seed)).toHaveLength(projectionEvents(parent.session.events).length)
    const parentHistory = parent.session.deriveMessages()

    const plain = await forkAgent(loop, parent, 'fork-plain')
    await loop.say(plain, 'fourth, on the fork')
    const [first] = requestsOf(loop, plain) as [GenerateOptions]
    // The parent's request/projection events are history: they rebuild the parent's requests, they select nothing on the fork.
    expect(first.messages.slice(0, -1).map(m => JSON.stringify(m))).toEqual(parentHistory.map(m => JSON.stringify(m)))
    expect(textOf(first.messages.at(-1)!)).toBe('fourth, on the fork')
    expect(projectionEvents(plain.session.events.slice(seed.length))).toEqual([])

    const projected = await forkAgent(loop, parent, 'fork-projected', undefined, keepLastNodes(2))
    await loop.say(projected, 'fourth, on the fork')
    const [selected] = requestsOf(loop, projected) as [GenerateOptions]
    expect(selected.messages.map(textOf)).toEqual(['third', 'three', 'fourth, on the fork'])
    expect(projectionEvents(projected.session.events.slice(seed.length)).map(p => p.data)).toMatchObject([{ turn: 4, step: 1, generation: 0, revision: 'keep-last-2' }])

    // DSH's session and agent-loop invariants ran on every request of both forks.
    expect(loop.errors).toEqual([])
    expect(plain.session.header).toMatchObject({ parentSession: parent.session.id, seedLength: seed.length })
  })
})

describe('offline replay: the fork’s persisted JSONL', () => {
  it('replays, request by request, what the provider received: the parent’s projected requests, then the fork’s', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-seam-fork-'))
    roots.push(root)
    const { loop, parent } = await projectedParent({ persistRoot: root })
    const fork = await forkAgent(loop, parent, 'fork-persisted', undefined, keepLastNodes(3))
    await loop.say(fork, 'fourth, on the fork')
    await loop.say(fork, 'fifth, on the fork')
    await loop.ctx.sessions.flush(fork.session)
    const file = await readSessionLog(sessionLogPath(loop, fork))
    expect(file.header).toMatchObject({ parentSession: parent.session.id })
    expectReplayed(file.events, [...requestsOf(loop, parent), ...requestsOf(loop, fork)])
    expect(replayRequests(file.events).filter(request => request.projection !== undefined)).toHaveLength(projectionEvents(file.events).length)
    expect(loop.errors).toEqual([])
  })
})

describe('request invariant: on a fork', () => {
  it('fails a fork request whose logged projection is not what was sent', async () => {
    const { loop, parent } = await projectedParent()
    const fork = await forkAgent(loop, parent, 'fork-forged')
    // No listener: the loop sends every node, but a projection naming only the newest node is logged for the request.
    fork.ctx.on('agent/request', async ({ turn, step }, next) => {
      const { nodes } = fork.session.surface
      const last = nodes.at(-1)!
      fork.session.append('request/projection', { turn, step, generation: fork.session.surface.replaceGeneration, include: [[last, last]], surfaceNodes: nodes.length, includedNodes: 1 })
      return next()
    })
    await loop.say(fork, 'fourth, on the fork')
    expect(loop.errors.map(e => (e.error as Error).name)).toEqual(['InvariantError'])
    expect(String(loop.errors[0]!.error)).toMatch(/diverges from the dispatch-time durable derivation/)
    expect(requestsOf(loop, fork)).toEqual([])
  })

  it('a seed whose copied projection was altered no longer replays the parent’s requests', async () => {
    const { loop, parent } = await projectedParent()
    const seed = forkSeed(parent.session.events)
    const copied = seed.findLast((event): event is SessionEvent<'request/projection'> => event.type === 'request/projection')!
    const [[from]] = copied.data.include as [[number, number]]
    // Widen the last copied projection by the node before it: still a valid projection, but not the one that was sent.
    const before = parent.session.surface.nodes[parent.session.surface.nodes.indexOf(from) - 1]!
    copied.data = { ...copied.data, include: [[before, from], ...copied.data.include.slice(1)] as typeof copied.data.include, includedNodes: copied.data.includedNodes + 1 }
    const fork = await forkAgent(loop, parent, 'fork-tampered', seed)
    const replayed = replayRequests(fork.session.events)
    const sent = requestsOf(loop, parent)
    const diffs = replayed.map((request, i) => diffRequest(request, sent[i]!))
    expect(diffs.slice(0, -1)).toEqual(sent.slice(0, -1).map(() => undefined))
    expect(diffs.at(-1)).toMatch(/^request of turn 3 step 1 \(seq \d+\): message 0 differs \(3 sent, 4 rebuilt\)/)
  })
})

describe('compaction: a fork of a projected session, with the projection-aware engine', () => {
  it('measures pressure on what the fork sends: it compacts only nodes that request sends, and every request replays', async () => {
    const engine: EngineChoice = { kind: 'projection-aware' }
    // Turns 8 and 9 answer with ~750 tokens each: the last-3-turns projection of turn 10 exceeds the 1,600-token threshold.
    const { loop, converse } = await bootScenario({ dsh, engine, userChars: 120, replyChars: (turn: number) => (turn === 8 || turn === 9 ? 3000 : 400) })
    const parent = loop.create('compaction-parent')
    keepLastTurns(parent, 3)
    await converse(parent, 1, 7)
    expect(compactionsOf(parent.session.events)).toEqual([])
    const seed = forkSeed(parent.session.events)
    const fork = await forkAgent(loop, parent, 'compaction-fork', seed)
    keepLastTurns(fork, 3)
    await converse(fork, 8, 11)
    expect(loop.errors).toEqual([])
    const events = fork.session.events
    const compactions = compactionsOf(events.slice(seed.length))
    expect(compactions.map(c => c.turn)).toEqual([10])
    const oldestKept = events.find(e => e.type === 'turn/start' && e.data.turn === 8)!.seq
    // Stock pressure would shadow the oldest history; the fork's compaction stays within the last three turns it sends.
    expect(compactions[0]!.shadowedSeqs.every(seq => seq > oldestKept)).toBe(true)
    // The host re-projected the replaced surface once: turn 10's request was sent under the compaction's generation.
    expect(projectionEvents(events).filter(p => p.data.turn === 10).map(p => p.data.generation)).toEqual([1])
    expectEveryRequestReplayed(events, [...loopRequests(loop, parent), ...loopRequests(loop, fork)])
  })
})
