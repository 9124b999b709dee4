/**
 * Real-loop test material: agents that select context, and the check of the linear replay against what the adapter
 * received and against DSH's own quadratic reconstruction (`rebuildRequestsByPrefix`: a fresh Session over the log
 * prefix before each request's first chunk).
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { isAgentLoopRequest } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { rebuildRequestsByPrefix } from '@dsh-seam/loop-testkit'
import { expect } from 'vitest'
import type { ReplayedRequest } from '../src/replay.ts'
import { diffRequest, replayRequests } from '../src/replay.ts'

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

/** The requests the loop itself sent (compaction's summarization calls go through the same adapter). */
export function loopRequests(loop: BootedLoop): GenerateOptions[] {
  return loop.adapter.requests.filter(request => isAgentLoopRequest(request))
}

/**
 * Replay an agent's log and check every request against what the adapter received and against the prefix rebuild:
 * the same request boundaries, messages and header.
 * @param loop - the booted loop.
 * @param events - the agent's session log (live or read back).
 * @returns the replayed requests.
 */
export function expectFaithfulReplay(loop: BootedLoop, events: readonly SessionEvent[]): ReplayedRequest[] {
  const replayed = replayRequests(events)
  const sent = loopRequests(loop)
  const rebuilt = rebuildRequestsByPrefix(loop.dsh, events)
  expect(replayed).toHaveLength(sent.length)
  expect(replayed.map(request => request.seq)).toEqual(rebuilt.map(request => request.seq))
  replayed.forEach((request, i) => {
    expect(diffRequest(request, sent[i] as GenerateOptions)).toBeUndefined()
    expect(JSON.stringify(request.messages)).toBe(JSON.stringify(rebuilt[i]?.messages))
    expect(request.header).toEqual(rebuilt[i]?.header)
  })
  return replayed
}
