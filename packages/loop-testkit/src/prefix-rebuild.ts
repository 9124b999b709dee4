/**
 * The reference request reconstruction DSH's own `request-reconstruction.spec.ts` uses: rebuild a `Session` from
 * the log prefix before each request's first `assistant/chunk`, then derive. Quadratic; a test oracle and the
 * baseline `replayRequests` is measured against.
 * @module @dsh-seam/loop-testkit/prefix-rebuild
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { EpochHeader, SessionEvent } from '@deepseek-ai/dsh-session'
import { opensRequest, requestMessagesFromLog } from '@dsh-seam/agent-context'
import type { DshModules } from './modules.ts'

/** One request rebuilt from its log prefix. */
export interface PrefixRequest {
  readonly turn: number
  readonly step: number
  /** Seq of the request's first `assistant/chunk`. */
  readonly seq: number
  readonly messages: Message[]
  readonly header: EpochHeader | undefined
}

/**
 * Seqs of the first `assistant/chunk` of every request in a log, by the replay's own boundary rule (`opensRequest`).
 * @param events - a session log.
 * @returns request start seqs in log order.
 */
export function requestStarts(events: readonly SessionEvent[]): number[] {
  const starts: number[] = []
  let previousChunk: SessionEvent<'assistant/chunk'> | undefined
  for (const event of events) {
    if (event.type !== 'assistant/chunk') continue
    if (opensRequest(event, previousChunk)) starts.push(event.seq)
    previousChunk = event
  }
  return starts
}

/**
 * Rebuild every request of a log by constructing a `Session` from each request's prefix.
 * @param dsh - the module set whose `Session` validates the prefix.
 * @param events - a session log.
 * @returns one rebuilt request per request start.
 */
export function rebuildRequestsByPrefix(dsh: DshModules, events: readonly SessionEvent[]): PrefixRequest[] {
  return requestStarts(events).map((seq, i) => {
    const prefix = structuredClone(events.slice(0, seq))
    const session = dsh.session.Session.create(dsh.session.SessionId(`prefix-${i}`), prefix)
    const { turn, step } = (events[seq] as SessionEvent<'assistant/chunk'>).data
    return { turn, step, seq, messages: requestMessagesFromLog(session), header: dsh.session.foldRequestHeader(prefix) }
  })
}
