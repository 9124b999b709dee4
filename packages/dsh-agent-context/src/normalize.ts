/**
 * The host's projection normalizer: validate an `agent/context` result against the surface it was chosen from and
 * bring it to the one form the loop sends and logs.
 * @module @dsh-context/agent-context/normalize
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import { AgentContextError } from './errors.ts'
import { toolUnits } from './nodes.ts'

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
  /** Tool units of `nodes`, when the caller already has them ({@link toolUnits}). */
  readonly units?: ReadonlyMap<number, readonly number[]>
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
  const position = new Map<number, number>()
  nodes.forEach((node, index) => position.set(node.seq, index))
  const unknown = (include as number[]).filter(seq => !position.has(seq))
  if (unknown.length > 0) {
    throw new AgentContextError('unknown-seq', agent, revision, [...new Set(unknown)], 'named seqs that are not message-bearing nodes of its current surface')
  }
  const units = input.units ?? toolUnits(nodes)
  const chosen = new Uint8Array(nodes.length)
  const choose = (seq: number): void => {
    const unit = units.get(seq)
    if (unit === undefined) chosen[position.get(seq) as number] = 1
    else for (const member of unit) chosen[position.get(member) as number] = 1
  }
  for (const seq of include as number[]) choose(seq)
  for (const seq of input.requiredSeqs) choose(seq)
  const result: number[] = []
  for (let i = 0; i < nodes.length; i++) if (chosen[i] === 1) result.push((nodes[i] as ContextNode).seq)
  return {
    include: result,
    ...revision === undefined ? {} : { revision },
    isDefault: result.length === nodes.length,
  }
}
