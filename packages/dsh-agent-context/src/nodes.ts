/**
 * Surface nodes as the seam sees them, and the tool-call units that bind them.
 * @module @dsh-context/agent-context/nodes
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
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

function hasCalls(message: Message): boolean {
  if (message.role !== 'assistant') return false
  for (const block of message.content) if (block.type === 'tool-call') return true
  return false
}

/** Tool-call units by surface position: `unitOf[i]` is the unit of position `i` (below `count`), or -1. */
export interface PositionUnits {
  readonly unitOf: Int32Array
  readonly count: number
}

/**
 * Group each assistant message carrying tool calls with the nodes carrying its results, by position. A result whose
 * call is not on the surface joins no unit; a call without results on the surface is a unit of one. One pass with no
 * per-unit allocation: a result is looked up among the newest call message's ids first (where DSH appends it), the
 * other calls, through a map built on the first miss, only after that.
 * @param nodes - message-bearing nodes in surface order.
 * @returns each position's unit.
 */
export function positionUnits(nodes: readonly ContextNode[]): PositionUnits {
  const unitOf = new Int32Array(nodes.length).fill(-1)
  const callIds: string[] = []
  const callUnits: number[] = []
  let count = 0
  let newestStart = 0
  let byId: Map<string, number> | undefined
  let indexed = 0
  const unitOfCall = (id: string): number | undefined => {
    for (let k = newestStart; k < callIds.length; k++) if (callIds[k] === id) return callUnits[k]
    byId ??= new Map()
    for (; indexed < callIds.length; indexed++) byId.set(callIds[indexed] as string, callUnits[indexed] as number)
    return byId.get(id)
  }
  for (let i = 0; i < nodes.length; i++) {
    const { message } = nodes[i] as ContextNode
    for (const block of message.content) {
      if (block.type === 'tool-call' && message.role === 'assistant') {
        if (unitOf[i] === -1) {
          unitOf[i] = count++
          newestStart = callIds.length
        }
        callIds.push(block.id)
        callUnits.push(unitOf[i] as number)
      } else if (block.type === 'tool-result') {
        const unit = unitOfCall(block.toolCallId)
        if (unit !== undefined) unitOf[i] = unit
      }
    }
  }
  return { unitOf, count }
}

/**
 * Group an assistant message carrying tool calls with the nodes carrying its results, by seq ({@link positionUnits}).
 * Nodes outside any multi-node unit are absent from the map.
 * @param nodes - message-bearing nodes in surface order.
 * @returns each unit member's seq mapped to the unit's seqs in surface order.
 */
export function toolUnits(nodes: readonly ContextNode[]): Map<number, readonly number[]> {
  const { unitOf, count } = positionUnits(nodes)
  const members: number[][] = Array.from({ length: count }, () => [])
  unitOf.forEach((unit, i) => { if (unit !== -1) (members[unit] as number[]).push((nodes[i] as ContextNode).seq) })
  const byMember = new Map<number, readonly number[]>()
  for (const seqs of members) if (seqs.length > 1) for (const seq of seqs) byMember.set(seq, seqs)
  return byMember
}

/**
 * Seqs the host always sends for a request: the `user/message` nodes appended in this step (after `stepStartSeq`),
 * the newest assistant node carrying tool calls when it is the newest assistant node (the unit this step continues),
 * and the surface tail (the input the model answers). Tool-unit closure is applied by the normalizer.
 * @param nodes - message-bearing nodes in surface order.
 * @param stepStartSeq - seq of this step's `step/start` event.
 * @param eventAt - the event of a seq.
 * @returns required seqs in surface order.
 */
export function requiredSeqs(
  nodes: readonly ContextNode[],
  stepStartSeq: number,
  eventAt: (seq: number) => SessionEvent,
): readonly number[] {
  const required = new Set<number>()
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i] as ContextNode
    if (node.seq <= stepStartSeq) break
    const event = eventAt(node.seq)
    if (event.type === 'user/message' && event.surfaceOp === 'append') required.add(i)
  }
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i] as ContextNode
    if (node.message.role !== 'assistant') continue
    if (hasCalls(node.message)) required.add(i)
    break
  }
  if (nodes.length > 0) required.add(nodes.length - 1)
  return Object.freeze([...required].sort((a, b) => a - b).map(i => (nodes[i] as ContextNode).seq))
}

/**
 * The required seqs of the request a live log is about to send: {@link requiredSeqs} after the log's newest
 * `step/start`.
 * @param nodes - the current message-bearing nodes in surface order.
 * @param events - the session log.
 * @returns required seqs in surface order.
 */
export function pendingRequiredSeqs(nodes: readonly ContextNode[], events: readonly SessionEvent[]): readonly number[] {
  const stepStart = events.findLast(event => event.type === 'step/start')?.seq ?? -1
  return requiredSeqs(nodes, stepStart, seq => events[seq] as SessionEvent)
}
