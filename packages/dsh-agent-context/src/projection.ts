/**
 * The `request/projection` session event: its compact encoding and the fold that finds the projection a request
 * is sent with.
 * @module @dsh-context/agent-context/projection
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { projectedMessages } from './check.ts'
import { contextNodes, NodeIndex } from './nodes.ts'

/**
 * Encode included seqs as inclusive seq ranges over the surface: one range per run of consecutive surface nodes.
 * @param surfaceSeqs - message-bearing surface seqs in surface order.
 * @param include - included seqs, a subsequence of `surfaceSeqs`.
 * @returns `[first, last]` runs; a run selects exactly the surface nodes from its first seq through its last, in
 * surface order (not a seq interval: after a replace the surface is not ordered by seq). `checkProjection` decodes them.
 */
export function encodeInclude(surfaceSeqs: readonly number[], include: readonly number[]): [number, number][] {
  const ranges: [number, number][] = []
  let j = 0
  let open: [number, number] | undefined
  for (const seq of surfaceSeqs) {
    if (j < include.length && include[j] === seq) {
      if (open === undefined) ranges.push(open = [seq, seq])
      else open[1] = seq
      j++
    } else {
      open = undefined
    }
  }
  return ranges
}

/**
 * The `request/projection` events of a log, in log order.
 * @param events - a session log.
 * @returns its projection events.
 */
export function projectionEvents(events: readonly SessionEvent[]): SessionEvent<'request/projection'>[] {
  return events.filter((event): event is SessionEvent<'request/projection'> => event.type === 'request/projection')
}

/**
 * The projection the next request is sent with: the newest `request/projection` event after the log's last
 * `assistant/chunk` and last `step/start`. A request consumes the projection before it; a request with none sends
 * the whole surface.
 * @param events - a session log, or the prefix before a request's first chunk.
 * @returns the pending projection event, if any.
 */
export function pendingProjection(events: readonly SessionEvent[]): SessionEvent<'request/projection'> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as SessionEvent
    if (event.type === 'request/projection') return event
    if (event.type === 'assistant/chunk' || event.type === 'step/start') return undefined
  }
  return undefined
}

/** The live session facts {@link requestMessagesFromLog} reads. */
export interface LoggedSession {
  readonly events: readonly SessionEvent[]
  readonly surface: { readonly nodes: readonly number[]; readonly replaceGeneration: number }
  deriveMessages(): Message[]
}

/**
 * The messages the log says the next request sends: `deriveMessages()`, or the pending projection's selection after
 * {@link projectedMessages} checked it against the open step and the host's rules.
 * @param session - a live session at request dispatch.
 * @returns the expected request messages.
 * @throws {ReplayError} naming the rule a pending projection breaks.
 */
export function requestMessagesFromLog(session: LoggedSession): Message[] {
  const { events, surface } = session
  const pending = pendingProjection(events)
  if (pending === undefined) return session.deriveMessages()
  const eventAt = (seq: number): SessionEvent => events[seq] as SessionEvent
  const step = events.findLast((event): event is SessionEvent<'step/start'> => event.type === 'step/start')
  const index = NodeIndex.forLog(contextNodes(surface.nodes, eventAt), events)
  return projectedMessages(index, pending, {
    turn: step?.data.turn ?? -1,
    step: step?.data.step ?? -1,
    generation: surface.replaceGeneration,
  })
}
