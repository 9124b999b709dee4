/**
 * Shared test material: DSH messages built with dsh-llm's own constructors, and a fast-check generator of surfaces
 * made of user messages, plain replies and tool units.
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '@deepseek-ai/dsh-llm'
import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm'
import fc from 'fast-check'
import { NodeIndex } from '../src/rules.ts'

export function userMessage(text: string): UserMessage {
  return createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } })
}

export function assistantMessage(text: string, callIds: readonly string[] = []): AssistantMessage {
  return createAssistantMessage({
    content: [
      { type: 'text', text },
      ...callIds.map(id => ({ type: 'tool-call' as const, id: CallId(id), name: 'echo', arguments: '{}' })),
    ],
    source: { provider: 'fake', model: 'fake-model' },
  })
}

export function toolResultMessage(callId: string): ToolResultMessage {
  return createToolResultMessage({ callId: CallId(callId), content: [{ type: 'text', text: `result of ${callId}` }], isError: false })
}

/** Turn 1's question and answer, then turn 2 (open since seq 3): a question and a tool-call unit. */
export const twoTurns = (): NodeIndex => NodeIndex.of([
  { seq: 1, message: userMessage('q1') },
  { seq: 2, message: assistantMessage('a1') },
  { seq: 4, message: userMessage('q2') },
  { seq: 5, message: assistantMessage('calling', ['c']) },
  { seq: 6, message: toolResultMessage('c') },
], 3)

/** A generated surface and, as ground truth, its tool units (call seq first, then its results). */
export interface GeneratedSurface {
  readonly nodes: readonly ContextNode[]
  readonly units: readonly (readonly number[])[]
}

type Item = { kind: 'user' } | { kind: 'reply' } | { kind: 'tools'; calls: number }

const itemArb: fc.Arbitrary<Item> = fc.oneof(
  fc.constant<Item>({ kind: 'user' }),
  fc.constant<Item>({ kind: 'reply' }),
  fc.integer({ min: 1, max: 3 }).map((calls): Item => ({ kind: 'tools', calls })),
)

function nodeCount(items: readonly Item[]): number {
  return items.reduce((n, item) => n + (item.kind === 'tools' ? 1 + item.calls : 1), 0)
}

function build(items: readonly Item[], seqs: readonly number[]): GeneratedSurface {
  const nodes: ContextNode[] = []
  const units: number[][] = []
  const push = (message: Message): number => {
    const seq = seqs[nodes.length] as number
    nodes.push({ seq, message })
    return seq
  }
  items.forEach((item, i) => {
    if (item.kind === 'user') push(userMessage(`user ${i}`))
    else if (item.kind === 'reply') push(assistantMessage(`reply ${i}`))
    else {
      const ids = Array.from({ length: item.calls }, (_, j) => `call-${i}-${j}`)
      const unit = [push(assistantMessage(`calling ${i}`, ids))]
      for (const id of ids) unit.push(push(toolResultMessage(id)))
      units.push(unit)
    }
  })
  return { nodes, units }
}

/**
 * Surfaces of 1-25 nodes with unique seqs in any order (a replace leaves a surface out of seq order).
 * @param maxItems - most user messages, replies and tool units.
 */
export function surfaceArb(maxItems = 12): fc.Arbitrary<GeneratedSurface> {
  return fc.array(itemArb, { minLength: 1, maxLength: maxItems }).chain((items) => {
    const n = nodeCount(items)
    return fc.uniqueArray(fc.nat({ max: 100_000 }), { minLength: n, maxLength: n }).map(seqs => build(items, seqs))
  })
}

/**
 * Seqs drawn from a surface with repeats, in random order.
 * @param nodes - the surface.
 * @param maxLength - most draws.
 */
export function seqsFrom(nodes: readonly ContextNode[], maxLength: number): fc.Arbitrary<number[]> {
  return fc.array(fc.nat({ max: nodes.length - 1 }), { maxLength }).map(indexes => indexes.map(i => (nodes[i] as ContextNode).seq))
}
