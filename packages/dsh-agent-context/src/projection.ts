/**
 * The `request/projection` session event: its compact encoding and the fold that finds the projection a request
 * is sent with.
 * @module @dsh-context/agent-context/projection
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { contextNodes } from './nodes.ts'

/**
 * Encode included seqs as inclusive seq ranges over the surface: one range per run of consecutive surface nodes.
 * @param surfaceSeqs - message-bearing surface seqs in surface order.
 * @param include - included seqs, a subsequence of `surfaceSeqs`.
 * @returns `[first, last]` ranges; a range selects exactly the surface nodes of its run.
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
 * Select the surface nodes a projection's ranges name. A range `[first, last]` is the run of consecutive surface
 * nodes from the node with seq `first` through the node with seq `last`, in surface order. It is not a seq interval:
 * after a replace the surface is not ordered by seq (the replacement node's seq is larger than the nodes after it).
 * @param surfaceSeqs - surface seqs in surface order, the same list the ranges were encoded over.
 * @param ranges - `[first, last]` runs as {@link encodeInclude} writes them.
 * @returns the selected seqs in surface order; a range whose `first` is not on the surface selects nothing, one whose
 * `last` never follows its `first` selects through the surface end.
 */
export function decodeInclude(surfaceSeqs: readonly number[], ranges: readonly (readonly [number, number])[]): number[] {
  const lastOf = new Map<number, number>()
  for (const [first, last] of ranges) lastOf.set(first, last)
  const selected: number[] = []
  let until: number | undefined
  for (const seq of surfaceSeqs) {
    until ??= lastOf.get(seq)
    if (until === undefined) continue
    selected.push(seq)
    if (seq === until) until = undefined
  }
  return selected
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
    if (event.type === 'request/projection') return event as SessionEvent<'request/projection'>
    if (event.type === 'assistant/chunk' || event.type === 'step/start') return undefined
  }
  return undefined
}

/** The log facts a request's messages are rebuilt from. */
export interface SurfaceState {
  /** Surface seqs in surface order. */
  readonly nodes: readonly number[]
  /** The surface's replace generation. */
  readonly replaceGeneration: number
}

/**
 * Rebuild the messages a request carries: the surface derivation, filtered by its projection when it has one.
 * @param surface - the surface at the request.
 * @param eventAt - the event of a seq.
 * @param projection - the request's projection event data, if any.
 * @returns the request messages.
 * @throws {Error} when the projection was made under another surface generation or its counts disagree with the surface.
 */
export function projectMessages(
  surface: SurfaceState,
  eventAt: (seq: number) => SessionEvent,
  projection?: RequestProjection,
): Message[] {
  const nodes = contextNodes(surface.nodes, eventAt)
  if (projection === undefined) return nodes.map(node => node.message)
  const sources = nodes.map(node => node.seq)
  const selected = new Set(decodeInclude(sources, projection.include))
  const messages = nodes.flatMap(node => selected.has(node.seq) ? [node.message] : [])
  if (projection.generation !== surface.replaceGeneration) {
    throw new Error(`request/projection of turn ${projection.turn} step ${projection.step} was made under surface generation ${projection.generation}, but the request was sent under generation ${surface.replaceGeneration}`)
  }
  if (projection.surfaceNodes !== sources.length || projection.includedNodes !== messages.length) {
    throw new Error(`request/projection of turn ${projection.turn} step ${projection.step} counts ${projection.includedNodes}/${projection.surfaceNodes} nodes, but its ranges select ${messages.length}/${sources.length} on the surface`)
  }
  return messages
}

/** The live session facts {@link requestMessagesFromLog} reads. */
export interface LoggedSession {
  readonly events: readonly SessionEvent[]
  readonly surface: SurfaceState
  deriveMessages(): Message[]
}

/**
 * The messages the log says the next request sends: `deriveMessages()`, filtered by the pending projection.
 * @param session - a live session at request dispatch.
 * @returns the expected request messages.
 * @throws {Error} when the pending projection does not match the surface.
 */
export function requestMessagesFromLog(session: LoggedSession): Message[] {
  const pending = pendingProjection(session.events)
  if (pending === undefined) return session.deriveMessages()
  return projectMessages(session.surface, seq => session.events[seq] as SessionEvent, pending.data)
}
