/**
 * The one reader of a logged `request/projection`: decode its surface runs and check the host's rules against the
 * surface its request was sent from. The log-rebuilt request invariant, `replayRequests` and `dsh-seam verify`
 * all call it, so a rule is enforced the same way wherever a log is read.
 * @module @dsh-seam/agent-context/check
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import type { ProjectionViolationCode } from './errors.ts'
import { isValidRevision, ReplayError, REVISION_RULE } from './errors.ts'
import type { NodeIndex } from './nodes.ts'
import { isUserInput } from './nodes.ts'

/** A broken host rule, with one sentence naming the seqs at fault. */
export interface ProjectionViolation {
  readonly code: ProjectionViolationCode
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
 * Decode a projection's `[first, last]` runs over the surface and check the host's rules: every endpoint is a
 * message-bearing node, runs go forward in surface order without overlap, every required position is included, no
 * tool-call unit is split, and the request opens with user input whenever user input precedes its first node. Costs
 * the size of what the request sends, not of the surface.
 * @param index - the surface's message-bearing nodes at the request, with the open turn set.
 * @param include - the projection's runs.
 * @returns the included positions, ascending, or the first broken rule.
 */
export function checkProjection(
  index: NodeIndex,
  include: readonly (readonly [number, number])[],
): { readonly included: readonly number[] } | { readonly violation: ProjectionViolation } {
  const included: number[] = []
  let previousLast = -1
  for (const [first, last] of include) {
    const from = index.position.get(first)
    const to = index.position.get(last)
    if (from === undefined || to === undefined) {
      const foreign = from === undefined ? first : last
      return { violation: { code: 'foreign-seq', detail: `run [${first}, ${last}] names seq ${foreign}, which is not a message-bearing node of the surface` } }
    }
    if (to < from || from <= previousLast) {
      return { violation: { code: 'unordered-ranges', detail: `run [${first}, ${last}] is not a forward run after the previous run in surface order` } }
    }
    for (let at = from; at <= to; at++) included.push(at)
    previousLast = to
  }
  const missing = index.required().filter(at => !includes(included, at)).map(at => index.seqs[at] as number)
  if (missing.length > 0) {
    return { violation: { code: 'required-missing', detail: `omits required seq${missing.length === 1 ? '' : 's'} ${missing.join(', ')}` } }
  }
  for (const at of included) {
    const unit = index.unitOf[at] as number
    if (unit === -1) continue
    const members = index.units[unit] as number[]
    const dropped = members.find(member => !includes(included, member))
    if (dropped !== undefined) {
      const seqs = members.map(member => index.seqs[member] as number)
      return { violation: { code: 'open-unit', detail: `includes seq ${index.seqs[at]} but not seq ${index.seqs[dropped]} of its tool-call unit [${seqs.join(', ')}]` } }
    }
  }
  const first = included[0]
  if (first !== undefined && index.firstInput !== -1 && index.firstInput < first && !isUserInput(index.messages[first] as Message)) {
    return { violation: { code: 'opening', detail: `opens with seq ${index.seqs[first]}, which is not user input, although user input (seq ${index.seqs[index.firstInput]}) precedes it` } }
  }
  return { included }
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function isRun(range: unknown): boolean {
  return Array.isArray(range) && range.length === 2 && range.every(isCount)
}

/** A logged projection's data as read back: the log is input, whatever its declared type. */
function isEncoded(value: unknown): value is RequestProjection {
  if (typeof value !== 'object' || value === null) return false
  const data = value as Partial<Record<keyof RequestProjection, unknown>>
  return isCount(data.turn) && isCount(data.step) && isCount(data.generation)
    && isCount(data.surfaceNodes) && isCount(data.includedNodes)
    && (data.revision === undefined || isValidRevision(data.revision))
    && (data.stale === undefined || isCount(data.stale))
    && Array.isArray(data.include) && data.include.every(isRun)
}

/** Where a request stands in its log: the request a projection must name. */
export interface RequestAt {
  readonly turn: number
  readonly step: number
  /** The surface `replaceGeneration` the request was sent under. */
  readonly generation: number
  /** A seq naming the request (its first chunk), for messages. */
  readonly seq?: number
}

/**
 * The messages a projected request sent, after checking its projection against the request: position (turn and step),
 * surface generation, the host's rules ({@link checkProjection}) and the counts.
 * @param index - the surface's message-bearing nodes at the request, with the open turn set.
 * @param projection - the `request/projection` event the request consumed.
 * @param request - the request.
 * @returns the request messages, shared with the index.
 * @throws {ReplayError} naming the rule the projection breaks, its seq, turn, step and revision.
 */
export function projectedMessages(index: NodeIndex, projection: SessionEvent<'request/projection'>, request: RequestAt): Message[] {
  const { seq } = projection
  const data: unknown = projection.data
  const at = request.seq === undefined ? 'the request' : `the request at seq ${request.seq}`
  if (!isEncoded(data)) {
    throw new ReplayError('malformed-projection', seq, `request/projection is not { turn, step, generation, include: [first, last][], surfaceNodes, includedNodes } of non-negative integers with an optional revision that is ${REVISION_RULE}`)
  }
  const position = { turn: data.turn, step: data.step, ...data.revision === undefined ? {} : { revision: data.revision } }
  if (data.turn !== request.turn || data.step !== request.step) {
    throw new ReplayError('projection-position', seq, `request/projection names turn ${data.turn} step ${data.step}, but ${at} is turn ${request.turn} step ${request.step}`, position)
  }
  if (data.generation !== request.generation) {
    throw new ReplayError('projection-generation', seq, `request/projection was made under surface generation ${data.generation}, but ${at} was sent under generation ${request.generation}`, position)
  }
  const checked = checkProjection(index, data.include)
  if ('violation' in checked) throw new ReplayError(checked.violation.code, seq, `request/projection ${checked.violation.detail} (${at})`, position)
  if (data.surfaceNodes !== index.length || data.includedNodes !== checked.included.length) {
    throw new ReplayError('projection-counts', seq, `request/projection counts ${data.includedNodes}/${data.surfaceNodes} nodes, but its runs select ${checked.included.length}/${index.length} at ${at}`, position)
  }
  return checked.included.map(i => index.messages[i] as Message)
}
