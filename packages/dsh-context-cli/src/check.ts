/**
 * The host invariants a logged `request/projection` must satisfy against the surface its request was sent from.
 * Generation, turn/step and node counts are checked by `replayRequests`; this module checks what only the surface's
 * nodes can tell: the ranges name surface nodes, the required seqs are included, tool units are whole.
 * @module @dsh-context/cli/check
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import { toolUnits } from '@dsh-context/agent-context'

/** Which host invariant a projection breaks. */
export type ProjectionViolationCode =
  /** A range endpoint is not a message-bearing node of the surface (include ⊆ surface). */
  | 'foreign-seq'
  /** A range ends before it starts, or starts inside or before the previous range, in surface order. */
  | 'unordered-ranges'
  /** A seq the host always sends (this step's user messages, the open tool-call unit, the tail) is missing. */
  | 'required-missing'
  /** A tool-call unit is included in part. */
  | 'open-unit'

/** A broken host invariant, with one sentence naming the seqs at fault. */
export interface ProjectionViolation {
  readonly code: ProjectionViolationCode
  readonly detail: string
}

/** The surface a projection was chosen from, as the host offered it to `agent/context`. */
export interface ProjectionOffer {
  /** Message-bearing surface nodes in surface order. */
  readonly nodes: readonly ContextNode[]
  /** Seqs the host always sends. */
  readonly requiredSeqs: readonly number[]
  /** Each node's seq mapped to its index in `nodes`, when the caller keeps one. */
  readonly position?: ReadonlyMap<number, number>
}

/**
 * Check a projection's ranges against the surface they were encoded over.
 * @param offer - the surface nodes and required seqs at the request.
 * @param include - the projection's `[first, last]` surface runs.
 * @returns the included node flags by surface position, or the first broken invariant.
 */
export function checkProjection(
  offer: ProjectionOffer,
  include: readonly (readonly [number, number])[],
): { readonly included: Uint8Array } | { readonly violation: ProjectionViolation } {
  const { nodes } = offer
  const position = offer.position ?? new Map(nodes.map((node, index) => [node.seq, index]))
  const included = new Uint8Array(nodes.length)
  let previousLast = -1
  for (const [first, last] of include) {
    const from = position.get(first)
    const to = position.get(last)
    if (from === undefined || to === undefined) {
      const foreign = from === undefined ? first : last
      return { violation: { code: 'foreign-seq', detail: `range [${first}, ${last}] names seq ${foreign}, which is not a message-bearing node of the surface` } }
    }
    if (to < from || from <= previousLast) {
      return { violation: { code: 'unordered-ranges', detail: `range [${first}, ${last}] is not a forward run after the previous range in surface order` } }
    }
    included.fill(1, from, to + 1)
    previousLast = to
  }
  const missing = offer.requiredSeqs.filter(seq => included[position.get(seq) as number] !== 1)
  if (missing.length > 0) {
    return { violation: { code: 'required-missing', detail: `omits required seq${missing.length === 1 ? '' : 's'} ${missing.join(', ')}` } }
  }
  const units = toolUnits(nodes)
  for (let i = 0; i < nodes.length; i++) {
    if (included[i] !== 1) continue
    const unit = units.get((nodes[i] as ContextNode).seq)
    const dropped = unit?.find(member => included[position.get(member) as number] !== 1)
    if (unit !== undefined && dropped !== undefined) {
      return { violation: { code: 'open-unit', detail: `includes seq ${(nodes[i] as ContextNode).seq} but not seq ${dropped} of its tool-call unit [${unit.join(', ')}]` } }
    }
  }
  return { included }
}
