/**
 * The `request/projection` session event: its compact encoding and the fold that finds the projection a request
 * is sent with.
 * @module @dsh-seam/agent-context/projection
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { projectedMessages } from './check.ts'
import { contextNodes } from './nodes.ts'

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
  return pendingProjectionOf(events.length, seq => events[seq])
}

/**
 * Whether an event ends the pending projection: a request consumed it (`assistant/chunk`) or a new step began
 * (`step/start`). With "a `request/projection` becomes pending", the one rule by which a log says which projection a
 * request sends: replay folds it forward, {@link pendingProjectionOf} reads it back.
 * @param event - an event of the log.
 * @returns whether no projection is pending after it.
 */
export function endsPendingProjection(event: SessionEvent): boolean {
  return event.type === 'assistant/chunk' || event.type === 'step/start'
}

/**
 * {@link pendingProjection} over a log read one event at a time: reads back only to the last
 * chunk or step start.
 * @param length - the log's length.
 * @param eventAt - the event of a seq.
 * @returns the pending projection event, if any.
 */
export function pendingProjectionOf(length: number, eventAt: (seq: number) => SessionEvent | undefined): SessionEvent<'request/projection'> | undefined {
  for (let seq = length - 1; seq >= 0; seq--) {
    const event = eventAt(seq)
    if (event === undefined || endsPendingProjection(event)) return undefined
    if (event.type === 'request/projection') return event
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
 * {@link projectedMessages} decoded it against the open step (turn, step, generation, runs, counts).
 * @param session - a live session at request dispatch.
 * @returns the expected request messages.
 * @throws {ReplayError} naming what in a pending projection does not decode.
 */
export function requestMessagesFromLog(session: LoggedSession): Message[] {
  const { events, surface } = session
  const pending = pendingProjection(events)
  if (pending === undefined) return session.deriveMessages()
  const eventAt = (seq: number): SessionEvent => events[seq] as SessionEvent
  const step = events.findLast((event): event is SessionEvent<'step/start'> => event.type === 'step/start')
  const nodes = contextNodes(surface.nodes, eventAt)
  const position = new Map(nodes.map((node, at) => [node.seq, at]))
  return projectedMessages({ messages: nodes.map(node => node.message), position }, pending, {
    turn: step?.data.turn ?? -1,
    step: step?.data.step ?? -1,
    generation: surface.replaceGeneration,
  })
}
