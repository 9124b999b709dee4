/**
 * The host's projection normalizer: validate an `agent/context` result against the surface it was chosen from and
 * bring it to the one form the loop sends and logs.
 * @module @dsh-context/agent-context/normalize
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import { AgentContextError } from './errors.ts'
import { positionUnits } from './nodes.ts'

/** A validated selection: every listed seq is a current node, in surface order, unit-closed. */
export interface NormalizedProjection {
  /** Included seqs in surface order, without duplicates, with required seqs and whole tool units. */
  readonly include: readonly number[]
  /** The listener's revision label. */
  readonly revision?: string
  /** Whether every node is included: the request equals the stock request and nothing is logged. */
  readonly isDefault: boolean
}

/** What the normalizer checks a listener result against. */
export interface NormalizeInput {
  /** Session id of the agent, for error messages. */
  readonly agent: string
  /** Message-bearing surface nodes in surface order, as offered to the listeners. */
  readonly nodes: readonly ContextNode[]
  /** Seqs always sent; each is one of `nodes`. */
  readonly requiredSeqs: readonly number[]
}

/**
 * Validate and normalize one `agent/context` result. Rules, in order: the result must be an object whose `include`
 * is an array of safe non-negative integers naming message-bearing surface nodes, and whose `revision`, if present,
 * is a string; duplicates are dropped; `requiredSeqs` are added; a selected assistant tool-call message brings its
 * tool results and a selected tool result brings its call and sibling results; the result follows surface order.
 * @param input - the surface and required seqs the listeners were offered.
 * @param selection - the waterfall's result, untrusted.
 * @returns the normalized projection.
 * @throws {AgentContextError} naming the agent, the revision and the offending values.
 */
export function normalizeSelection(input: NormalizeInput, selection: unknown): NormalizedProjection {
  const { agent, nodes } = input
  if (typeof selection !== 'object' || selection === null) {
    throw new AgentContextError('invalid-selection', agent, undefined, [selection], 'returned a result that is not an object with an include array')
  }
  const { include, revision } = selection as { include?: unknown; revision?: unknown }
  if (revision !== undefined && typeof revision !== 'string') {
    throw new AgentContextError('invalid-revision', agent, undefined, [revision], 'returned a revision that is not a string')
  }
  if (!Array.isArray(include)) {
    throw new AgentContextError('invalid-selection', agent, revision, [include], 'returned an include that is not an array')
  }
  const invalid = Array.from(include as unknown[], seq => seq).filter(seq => !Number.isSafeInteger(seq) || (seq as number) < 0)
  if (invalid.length > 0) {
    throw new AgentContextError('invalid-seq', agent, revision, invalid, 'returned include values that are not seqs (safe non-negative integers)')
  }
  const chosen = new Uint8Array(nodes.length)
  const unknown = mark(nodes, include as number[], chosen)
  if (unknown.length > 0) {
    throw new AgentContextError('unknown-seq', agent, revision, [...new Set(unknown)], 'named seqs that are not message-bearing nodes of its current surface')
  }
  mark(nodes, input.requiredSeqs, chosen)
  const { unitOf, count } = positionUnits(nodes)
  const unitChosen = new Uint8Array(count)
  for (let i = 0; i < nodes.length; i++) if (chosen[i] === 1 && unitOf[i] !== -1) unitChosen[unitOf[i] as number] = 1
  for (let i = 0; i < nodes.length; i++) if (unitOf[i] !== -1 && unitChosen[unitOf[i] as number] === 1) chosen[i] = 1
  const result: number[] = []
  for (let i = 0; i < nodes.length; i++) if (chosen[i] === 1) result.push((nodes[i] as ContextNode).seq)
  return {
    include: result,
    ...revision === undefined ? {} : { revision },
    isDefault: result.length === nodes.length,
  }
}

/**
 * Set `chosen` at the positions of `seqs`: a merge walk while `seqs` follow surface order (what listeners filtering
 * `nodes` return), then a seq→position map for the rest.
 * @returns the seqs that name no node.
 */
function mark(nodes: readonly ContextNode[], seqs: readonly number[], chosen: Uint8Array): number[] {
  let j = 0
  for (let i = 0; i < nodes.length && j < seqs.length; i++) {
    while (j < seqs.length && seqs[j] === (nodes[i] as ContextNode).seq) {
      chosen[i] = 1
      j++
    }
  }
  if (j === seqs.length) return []
  const position = new Map<number, number>()
  nodes.forEach((node, index) => position.set(node.seq, index))
  const unknown: number[] = []
  for (; j < seqs.length; j++) {
    const at = position.get(seqs[j] as number)
    if (at === undefined) unknown.push(seqs[j] as number)
    else chosen[at] = 1
  }
  return unknown
}
