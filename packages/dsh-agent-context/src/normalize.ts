/**
 * The host's projection normalizer: validate an `agent/context` result against the surface it was chosen from and
 * bring it to the one form the loop sends and logs.
 * @module @dsh-seam/agent-context/normalize
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { AgentContextError, characterCount, describeBounded, isValidRevision, MAX_REVISION_UNITS, REVISION_RULE } from './errors.ts'
import type { NodeIndex } from './nodes.ts'
import { staleResolver } from './surface.ts'

/** A validated selection: every listed seq is a current node, in surface order, closed under the host's rules. */
export interface NormalizedProjection {
  /** Included seqs in surface order, without duplicates, with the required seqs, whole tool units and a user opening. */
  readonly include: readonly number[]
  /** Their positions in the index, ascending. */
  readonly positions: readonly number[]
  /** The listener's revision label. */
  readonly revision?: string
  /** How many listener seqs named nodes a compaction replaced (resolved to their replacement or dropped). */
  readonly stale: number
  /** Whether every node is included: the request equals the one built with no listener and nothing is logged. */
  readonly isDefault: boolean
}

/** What the normalizer checks a listener result against. */
export interface NormalizeInput {
  /** Session id of the agent, for error messages. */
  readonly agent: string
  /** The message-bearing surface nodes offered to the listeners, with the open turn. */
  readonly index: NodeIndex
  /** Seqs always sent; each is a node of `index`. */
  readonly requiredSeqs: readonly number[]
  /**
   * Where a seq that is not on the surface went: its replacement's seq, `null` when it was replaced by nothing that is
   * still a node, `undefined` when it never was a message-bearing node. Without it every such seq is unknown.
   */
  readonly resolve?: (seq: number) => number | null | undefined
}

/** Read `include` and `revision` from an untrusted result; whatever reading throws becomes a typed error. */
function read(agent: string, selection: unknown): { include: unknown[]; revision: string | undefined } {
  if (typeof selection !== 'object' || selection === null) {
    throw new AgentContextError('invalid-selection', agent, undefined, [selection], 'returned a result that is not an object with an include array')
  }
  let include: unknown
  let revision: unknown
  let items: unknown[] | undefined
  try {
    ;({ include, revision } = selection as { include?: unknown; revision?: unknown })
    items = Array.isArray(include) ? Array.from(include as unknown[]) : undefined
  } catch (error: unknown) {
    throw new AgentContextError('invalid-selection', agent, undefined, [], `returned a result that cannot be read (${describeBounded(error)})`, error)
  }
  if (revision !== undefined && !isValidRevision(revision)) {
    throw new AgentContextError('invalid-revision', agent, undefined, [typeof revision === 'string' ? `${revision.slice(0, 40)}${revision.length > 40 ? '…' : ''} (${revisionSize(revision)})` : revision], `returned a revision that is not ${REVISION_RULE}`)
  }
  if (items === undefined) {
    throw new AgentContextError('invalid-selection', agent, revision, [include], 'returned an include that is not an array')
  }
  return { include: items, revision }
}

/** A refused revision's size in the unit that refused it. */
function revisionSize(revision: string): string {
  return revision.length > MAX_REVISION_UNITS ? `${revision.length} UTF-16 code units` : `${characterCount(revision)} characters`
}

/**
 * Validate and normalize one `agent/context` result. The result must be an object whose `include` is an array of
 * safe non-negative integers and whose `revision`, if present, is a printable string of at most
 * {@link MAX_REVISION_LENGTH} characters as users count them (`isValidRevision`). A seq a compaction replaced
 * resolves to its replacement or is dropped (counted in `stale`); a seq that never was a node is refused. Then
 * duplicates go, `requiredSeqs` join, tool units close, the nearest user input joins when the first node is not one
 * ({@link NodeIndex.close}), and surface order is restored.
 * @param input - the surface and required seqs the listeners were offered.
 * @param selection - the waterfall's result, untrusted.
 * @returns the normalized projection.
 * @throws {AgentContextError} naming the agent, the revision and the offending values.
 */
export function normalizeSelection(input: NormalizeInput, selection: unknown): NormalizedProjection {
  const { agent, index } = input
  const { include, revision } = read(agent, selection)
  const invalid = include.filter(seq => !Number.isSafeInteger(seq) || (seq as number) < 0)
  if (invalid.length > 0) {
    throw new AgentContextError('invalid-seq', agent, revision, invalid, 'returned include values that are not seqs (safe non-negative integers)')
  }
  const chosen: number[] = []
  const unknown: number[] = []
  let stale = 0
  for (const seq of include as number[]) {
    let at = index.position.get(seq)
    if (at === undefined) {
      const resolved = input.resolve?.(seq)
      if (resolved === undefined) {
        unknown.push(seq)
        continue
      }
      stale++
      if (resolved === null) continue
      at = index.position.get(resolved)
      /* v8 ignore next -- the resolver answers only seqs the index holds; a resolver that does not drops the seq */
      if (at === undefined) continue
    }
    chosen.push(at)
  }
  if (unknown.length > 0) {
    throw new AgentContextError('unknown-seq', agent, revision, [...new Set(unknown)], 'named seqs that never were message-bearing nodes of its surface')
  }
  for (const seq of input.requiredSeqs) {
    const at = index.position.get(seq)
    /* v8 ignore next -- required seqs come from the same index's required(), which only grows */
    if (at !== undefined) chosen.push(at)
  }
  const positions = index.close(chosen)
  return {
    include: positions.map(at => index.seqs[at] as number),
    positions,
    ...revision === undefined ? {} : { revision },
    stale,
    isDefault: positions.length === index.length,
  }
}

/**
 * {@link normalizeSelection} for a live session's offer: seqs a compaction replaced resolve through the session's log,
 * read only when a listener names a seq that is not on the surface.
 * @param agent - session id of the agent, for error messages.
 * @param log - the session log, read on the first stale seq.
 * @param index - the offered nodes, with the open turn.
 * @param requiredSeqs - the offered required seqs.
 * @param selection - the waterfall's result, untrusted.
 * @returns the normalized projection.
 * @throws {AgentContextError} naming the agent, the revision and the offending values.
 */
export function normalizeOffer(
  agent: string,
  log: () => readonly SessionEvent[],
  index: NodeIndex,
  requiredSeqs: readonly number[],
  selection: unknown,
): NormalizedProjection {
  return normalizeSelection({ agent, index, requiredSeqs, resolve: staleResolver(log, seq => index.position.has(seq)) }, selection)
}
