/** Shared assertions of the compaction tests: replay of every request, compaction records, canonical JSON. */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { diffRequest, replayRequests } from '@dsh-seam/agent-context'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { expect } from 'vitest'
import { isSummarization } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'

/** The loop-built requests the adapter received for one agent, summarization calls excluded. */
export function loopRequests(loop: BootedLoop, agent: Agent): GenerateOptions[] {
  return loop.adapter.requests.filter(request => request.sessionId === agent.id && !isSummarization(request))
}

/**
 * Assert that the log rebuilds every sent request exactly (`replayRequests` + `diffRequest`), in order.
 * @returns the number of requests.
 */
export function expectEveryRequestReplayed(events: readonly SessionEvent[], sent: readonly GenerateOptions[]): number {
  const replayed = replayRequests(events)
  expect(replayed).toHaveLength(sent.length)
  expect(replayed.map((request, i) => diffRequest(request, sent[i] as GenerateOptions))).toEqual(sent.map(() => undefined))
  return replayed.length
}

/** One compaction as the log records it. */
export interface LoggedCompaction {
  /** Turn that owns the `compaction/start`. */
  readonly turn: number | null
  readonly startSeq: number
  readonly shadowedSeqs: readonly number[]
  /** Seq of the replacement `user/message`. */
  readonly replacementSeq: number
}

/** The successful compactions of a log. */
export function compactionsOf(events: readonly SessionEvent[]): LoggedCompaction[] {
  const compactions: LoggedCompaction[] = []
  for (const event of events) {
    if (event.type !== 'compaction/summary') continue
    const start = events.findLast(e => e.seq < event.seq && e.type === 'compaction/start') as SessionEvent<'compaction/start'>
    const { shadowedSeqs } = (event).data
    compactions.push({ turn: start.data.turn, startSeq: start.seq, shadowedSeqs, replacementSeq: event.seq + 1 })
  }
  return compactions
}

/** Seq of the first event of `type` matching `test`. */
export function seqOf(events: readonly SessionEvent[], type: SessionEvent['type'], test: (data: never) => boolean = () => true): number {
  const found = events.find(event => event.type === type && test(event.data as never))
  if (found === undefined) throw new Error(`no ${type} event matches`)
  return found.seq
}

