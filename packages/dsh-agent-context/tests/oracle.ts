/**
 * Real-loop test material: agents that select context, and DSH's own quadratic request reconstruction (a fresh
 * Session over the log prefix before each request's first chunk) as the oracle for the linear replay.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import { isAgentLoopRequest } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage, foldRequestHeader, Session, SessionId } from '@deepseek-ai/dsh-session'
import type { BootedLoop } from '@dsh-context/loop-testkit'
import { expect } from 'vitest'
import type { ReplayedRequest } from '../src/index.ts'
import { diffRequest, pendingProjection, replayRequests } from '../src/index.ts'

/**
 * Make an agent send only the last `n` surface nodes (the host adds required seqs and whole tool units).
 * @param agent - the agent whose requests are projected.
 * @param n - nodes kept.
 */
export function keepLast(agent: Agent, n: number): void {
  agent.ctx.on('agent/context', async (_payload, next) => {
    const all = await next()
    return { include: all.include.slice(-n), revision: `keep-last-${n}` }
  })
}

/**
 * The messages and header of the request whose first chunk is `chunkSeq`, the way DSH's request-reconstruction test
 * rebuilds them: `Session.create` over the prefix, `deriveMessages()`, then the pending projection's runs.
 */
export function oracle(events: readonly SessionEvent[], chunkSeq: number): { messages: Message[]; header: ReturnType<typeof foldRequestHeader> } {
  const prefix = structuredClone(events.slice(0, chunkSeq))
  const session = Session.create(SessionId('oracle'), prefix)
  const messages = session.deriveMessages()
  const header = foldRequestHeader(prefix)
  const pending = pendingProjection(prefix)
  if (pending === undefined) return { messages, header }
  const sources = session.surface.nodes.filter(seq => deriveEventMessage(session.events[seq] as SessionEvent) !== null)
  const chosen = new Set(pending.data.include.flatMap(([first, last]) => sources.slice(sources.indexOf(first), sources.indexOf(last) + 1)))
  return { messages: messages.filter((_, i) => chosen.has(sources[i] as number)), header }
}

/** The requests the loop itself sent (compaction's summarization calls go through the same adapter). */
export function loopRequests(loop: BootedLoop): GenerateOptions[] {
  return loop.adapter.requests.filter(request => isAgentLoopRequest(request))
}

/**
 * Replay an agent's log and check every request against what the adapter received and against the oracle.
 * @param loop - the booted loop.
 * @param events - the agent's session log (live or read back).
 * @returns the replayed requests.
 */
export function expectFaithfulReplay(loop: BootedLoop, events: readonly SessionEvent[]): ReplayedRequest[] {
  const replayed = replayRequests(events)
  const sent = loopRequests(loop)
  expect(replayed).toHaveLength(sent.length)
  replayed.forEach((request, i) => {
    expect(diffRequest(request, sent[i] as GenerateOptions)).toBeUndefined()
    const expected = oracle(events, request.seq)
    expect(JSON.stringify(request.messages)).toBe(JSON.stringify(expected.messages))
    expect(request.header).toEqual(expected.header)
  })
  return replayed
}
