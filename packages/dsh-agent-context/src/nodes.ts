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

function callIds(message: Message): string[] {
  if (message.role !== 'assistant') return []
  return message.content.flatMap(block => block.type === 'tool-call' ? [block.id] : [])
}

function resultIds(message: Message): string[] {
  return message.content.flatMap(block => block.type === 'tool-result' ? [block.toolCallId] : [])
}

/**
 * Group an assistant message carrying tool calls with the nodes carrying its results. A result whose call is not
 * on the surface forms no unit. Nodes outside any unit are absent from the map.
 * @param nodes - message-bearing nodes in surface order.
 * @returns each unit member's seq mapped to the unit's seqs in surface order.
 */
export function toolUnits(nodes: readonly ContextNode[]): Map<number, readonly number[]> {
  const owner = new Map<string, number>()
  const units = new Map<number, number[]>()
  for (const { seq, message } of nodes) {
    for (const id of callIds(message)) owner.set(id, seq)
    for (const id of resultIds(message)) {
      const call = owner.get(id)
      if (call === undefined || call === seq) continue
      let unit = units.get(call)
      if (unit === undefined) units.set(call, unit = [call])
      if (unit.at(-1) !== seq) unit.push(seq)
    }
  }
  const byMember = new Map<number, readonly number[]>()
  for (const unit of units.values()) for (const seq of unit) byMember.set(seq, unit)
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
    if (event.type === 'user/message' && event.surfaceOp === 'append') required.add(node.seq)
  }
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i] as ContextNode
    if (node.message.role !== 'assistant') continue
    if (callIds(node.message).length > 0) required.add(node.seq)
    break
  }
  const tail = nodes.at(-1)
  if (tail !== undefined) required.add(tail.seq)
  return Object.freeze(nodes.flatMap(node => required.has(node.seq) ? [node.seq] : []))
}
