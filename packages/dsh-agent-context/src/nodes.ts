/**
 * Surface nodes as the seam sees them: the message-bearing nodes of a surface, and those it gained since a mark.
 * @module @dsh-seam/agent-context/nodes
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage } from '@deepseek-ai/dsh-session'

/**
 * The message-bearing nodes of a surface, in surface order: the exact sources of `Session.deriveMessages()`.
 * The array and its nodes are frozen (messages already are), so a listener cannot grow the set it selects from.
 * @param surfaceNodes - surface seqs in model-visible order.
 * @param eventAt - the event of a seq.
 * @returns one node per surface seq whose event derives a message.
 */
export function contextNodes(surfaceNodes: readonly number[], eventAt: (seq: number) => SessionEvent): readonly ContextNode[] {
  const nodes: ContextNode[] = []
  for (const seq of surfaceNodes) {
    const message = deriveEventMessage(eventAt(seq))
    if (message !== null) nodes.push(Object.freeze({ seq, message }))
  }
  return Object.freeze(nodes)
}

/** Where a previous derivation of a surface's nodes stopped. */
export interface NodesMark {
  /** The surface's replace generation then. */
  readonly generation: number
  /** How many surface seqs it had derived. */
  readonly surfaceLength: number
}

/**
 * The message-bearing nodes a surface gained since a previous derivation. Within one replace generation the surface
 * only appends, so the earlier nodes still hold; a replace (or no previous derivation) restarts from the head.
 * @param surface - the current surface.
 * @param since - where the previous derivation stopped, if there was one.
 * @param eventAt - the event of a seq.
 * @returns the new nodes, whether they extend the previous ones (`false`: they replace them), and the new mark.
 */
export function appendedNodes(
  surface: { readonly nodes: readonly number[]; readonly replaceGeneration: number },
  since: NodesMark | undefined,
  eventAt: (seq: number) => SessionEvent,
): { readonly added: readonly ContextNode[]; readonly extends: boolean; readonly mark: NodesMark } {
  const extends_ = since !== undefined && since.generation === surface.replaceGeneration && since.surfaceLength <= surface.nodes.length
  return {
    added: contextNodes(surface.nodes.slice(extends_ ? since.surfaceLength : 0), eventAt),
    extends: extends_,
    mark: { generation: surface.replaceGeneration, surfaceLength: surface.nodes.length },
  }
}

/**
 * A live session's events by seq, read from the `Session.events` snapshot taken now: an append after this call is not
 * seen, so take a new reader after appending.
 * @param session - a live session.
 * @returns the event of a seq.
 */
export function sessionEventAt(session: Session): (seq: number) => SessionEvent {
  const { events } = session
  return seq => events[seq] as SessionEvent
}
