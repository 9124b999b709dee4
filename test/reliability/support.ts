/** Shared checks of the reliability tests: every request rebuilt from the log, the log verified, heap after GC. */

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { diffRequest, replayRequests } from '@dsh-seam/agent-context'
import type { LogAnalysis, TokenPricer } from '@dsh-seam/cli'
import { analyzeLog, meterPricer } from '@dsh-seam/cli'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { expect } from 'vitest'

let pricer: Promise<TokenPricer> | undefined

/**
 * What `dsh-seam verify` checks, in process: every request rebuilt, every projection against the host invariants.
 * @param events - a session log.
 * @returns the analysis.
 */
export async function verifyEvents(events: readonly SessionEvent[]): Promise<LogAnalysis> {
  pricer ??= meterPricer().then(meter => meter.pricer)
  return analyzeLog(events, await pricer)
}

/**
 * Assert that the adapter received exactly the requests `replayRequests` rebuilds from the agent's log, and that the
 * log verifies.
 * @param loop - the loop.
 * @param agent - one of its agents.
 * @returns the number of requests.
 */
export async function expectAgentVerifies(loop: BootedLoop, agent: Agent): Promise<number> {
  const events = agent.session.events
  const sent = loop.adapter.requests.filter(request => request.sessionId === agent.id)
  const replayed = replayRequests(events)
  expect(replayed.length).toBe(sent.length)
  expect(replayed.map((request, i) => diffRequest(request, sent[i]!)).filter(diff => diff !== undefined)).toEqual([])
  expect((await verifyEvents(events)).violation).toBeUndefined()
  return sent.length
}

let gc: (() => void) | undefined

/** @returns bytes of heap in use after a full garbage collection. */
export function heapAfterGc(): number {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  gc()
  return process.memoryUsage().heapUsed
}

