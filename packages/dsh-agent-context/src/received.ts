/**
 * Replaying request invariants in a plugin author's own tests: rebuild every request a log records and compare each
 * with what the adapter received.
 * @module @dsh-seam/agent-context/received
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { ReplayErrorCode } from './check.ts'
import { ReplayError } from './check.ts'
import type { ComparableRequest, ReplayedRequest } from './replay.ts'
import { diffRequest, replayRequests } from './replay.ts'

/** Why a received request does not match the log. */
export type RequestDivergenceCode =
  /** The log does not replay ({@link ReplayError}). */
  | ReplayErrorCode
  /** The log records a different number of requests than the adapter received. */
  | 'request-count'
  /** A request the adapter received differs from its rebuild (messages, then header fields, as DSH's invariant compares). */
  | 'request-differs'

/** The first request an adapter received that its session's log does not rebuild. */
export interface RequestDivergence {
  readonly code: RequestDivergenceCode
  /** 0-based position among the received requests, when one request is at fault. */
  readonly index: number | undefined
  /** Seq of the event at fault: the request's first `assistant/chunk`, or the event replay stopped at. */
  readonly seq: number | undefined
  readonly turn: number | undefined
  readonly step: number | undefined
  /** One sentence naming the difference. */
  readonly message: string
}

/**
 * Rebuild every request from the log alone and compare it, in order, with the requests the adapter received.
 * @param events - the session's log in seq order from seq 0: `session.events` of a live session, or the `events` of
 *   `readSessionLog(path)` for a persisted one.
 * @param received - the requests the adapter received for that session, in order (`GenerateOptions` as `stream()`
 *   got them).
 * @returns undefined when every request rebuilds, else the first divergence.
 */
export function firstRequestDivergence(events: Iterable<SessionEvent>, received: readonly ComparableRequest[]): RequestDivergence | undefined {
  let replayed: ReplayedRequest[]
  try {
    replayed = replayRequests(events)
  } catch (error: unknown) {
    if (!(error instanceof ReplayError)) throw error
    return { code: error.code, index: undefined, seq: error.seq, turn: error.request?.turn, step: error.request?.step, message: error.message }
  }
  const count = Math.min(replayed.length, received.length)
  for (const [index, request] of replayed.slice(0, count).entries()) {
    const difference = diffRequest(request, received[index] as ComparableRequest)
    if (difference !== undefined) return { code: 'request-differs', index, seq: request.seq, turn: request.turn, step: request.step, message: difference }
  }
  if (replayed.length === received.length) return undefined
  const first = replayed[count]
  return {
    code: 'request-count',
    index: count,
    seq: first?.seq,
    turn: first?.turn,
    step: first?.step,
    message: `the log records ${replayed.length} requests and the adapter received ${received.length}`,
  }
}
