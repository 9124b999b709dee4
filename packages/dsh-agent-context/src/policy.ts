/**
 * The host's request policy read back from a log: what in a projection today's host would not write. The host
 * enforces the policy when it writes a projection; readers decode projections ({@link decodeProjection}) and never
 * refuse one for this, since a log written under an earlier rule stays a valid log. `dsh-seam verify` reports the
 * findings as warnings.
 * @module @dsh-seam/agent-context/policy
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import { isValidRevision, MAX_REVISION_LENGTH } from './host.ts'
import type { NodeIndex } from './rules.ts'
import { isUserInput } from './rules.ts'

/** Which part of today's host policy a decoded projection does not meet. */
export type PolicyFindingCode =
  /** A required seq (the turn's input, standing context, the continuing tool-call unit, the tail) is missing. */
  | 'required-missing'
  /** A tool-call unit is included in part. */
  | 'open-unit'
  /** The request opens with a node that is not user input although user input precedes it on the surface. */
  | 'opening'
  /** The revision is not one the host logs today (`isValidRevision`). */
  | 'revision'

/** One policy finding, with one sentence naming the seqs at fault. */
export interface PolicyFinding {
  readonly code: PolicyFindingCode
  readonly detail: string
}

function includes(sorted: readonly number[], at: number): boolean {
  let lo = 0
  let hi = sorted.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const value = sorted[mid] as number
    if (value === at) return true
    if (value < at) lo = mid + 1
    else hi = mid - 1
  }
  return false
}

/**
 * The first part of today's host policy a decoded projection does not meet: every required position included, no
 * tool-call unit split, the request opening with user input whenever user input precedes its first node, and a
 * revision the host would log.
 * @param index - the surface's message-bearing nodes at the request, with the open turn set.
 * @param included - the projection's included positions, ascending ({@link decodeProjection}).
 * @param revision - the projection's revision, if it has one.
 * @returns the finding, or undefined when the projection meets the policy.
 */
export function policyFinding(index: NodeIndex, included: readonly number[], revision?: string): PolicyFinding | undefined {
  const missing = index.required().filter(at => !includes(included, at)).map(at => index.seqs[at] as number)
  if (missing.length > 0) {
    return { code: 'required-missing', detail: `omits required seq${missing.length === 1 ? '' : 's'} ${missing.join(', ')}` }
  }
  for (const at of included) {
    const unit = index.unitOf[at] as number
    if (unit === -1) continue
    const members = index.units[unit] as number[]
    const dropped = members.find(member => !includes(included, member))
    if (dropped !== undefined) {
      const seqs = members.map(member => index.seqs[member] as number)
      return { code: 'open-unit', detail: `includes seq ${index.seqs[at]} but not seq ${index.seqs[dropped]} of its tool-call unit [${seqs.join(', ')}]` }
    }
  }
  const first = included[0]
  if (first !== undefined && index.firstInput !== -1 && index.firstInput < first && !isUserInput(index.messages[first] as Message)) {
    return { code: 'opening', detail: `opens with seq ${index.seqs[first]}, which is not user input, although user input (seq ${index.seqs[index.firstInput]}) precedes it` }
  }
  if (revision !== undefined && !isValidRevision(revision)) {
    return { code: 'revision', detail: `names a revision that is not a string of at most ${MAX_REVISION_LENGTH} code units` }
  }
  return undefined
}
