/**
 * The one reader of a logged `request/projection`: decode its surface runs against the surface its request was sent
 * from. The log-rebuilt request invariant and request replay call it, so a log is read the same way everywhere, and
 * its typed failure, `ReplayError`.
 * @module @dsh-seam/agent-context/check
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'

/** Why a log does not replay. */
export type ReplayErrorCode =
  /** A `request/projection` event's fields are not the encoded form (ranges of seq pairs, integer counts). */
  | 'malformed-projection'
  /** A `request/projection` names another turn or step than the request that consumes it. */
  | 'projection-position'
  /** A `request/projection` was made under another surface generation than its request was sent under. */
  | 'projection-generation'
  /** A `request/projection`'s counts disagree with the nodes its ranges select on the surface. */
  | 'projection-counts'
  /** The projection's runs do not decode ({@link ProjectionViolationCode}). */
  | ProjectionViolationCode

/** Why a logged projection's runs do not decode over the surface its request was sent from. */
export type ProjectionViolationCode =
  /** A range endpoint is not a message-bearing node of the surface (include ⊆ surface). */
  | 'foreign-seq'
  /** A range ends before it starts, or starts inside or before the previous range, in surface order. */
  | 'unordered-ranges'

/** The request a replay failure belongs to. */
export interface ReplayPosition {
  readonly turn: number
  readonly step: number
  readonly revision?: string
}

/** A log that does not replay, naming the seq of the offending event and, for a projection, its request. */
export class ReplayError extends Error {
  override readonly name = 'ReplayError'

  /**
   * @param code - what did not match.
   * @param seq - seq of the offending event.
   * @param detail - one sentence on what was wrong.
   * @param request - the turn, step and revision of the projection at fault, when there is one.
   */
  constructor(readonly code: ReplayErrorCode, readonly seq: number, detail: string, readonly request?: ReplayPosition) {
    super(`session log does not replay at seq ${seq}${request === undefined ? '' : ` (turn ${request.turn} step ${request.step}${request.revision === undefined ? '' : ` revision ${JSON.stringify(request.revision)}`})`} [${code}]: ${detail}`)
  }
}

/** Message-bearing surface nodes by position: what a projection's runs are decoded against. */
export interface SurfaceNodes {
  /** The message of each position, in surface order. */
  readonly messages: readonly Message[]
  /** The position of each seq. */
  readonly position: ReadonlyMap<number, number>
}

/** A projection that does not decode, with one sentence naming the seqs at fault. */
export interface ProjectionViolation {
  readonly code: ProjectionViolationCode
  readonly detail: string
}

/**
 * Decode a projection's `[first, last]` runs over the surface: every endpoint is a message-bearing node and runs go
 * forward in surface order without overlap. Only the structure is checked: which nodes a request had to send is the
 * host's rule when it writes the projection, not a reader's, so a log written under an earlier rule still decodes.
 * Costs the size of what the request sends, not of the surface.
 * @param index - the surface's message-bearing nodes at the request.
 * @param include - the projection's runs.
 * @returns the included positions, ascending, or the first structural fault.
 */
export function decodeProjection(
  index: SurfaceNodes,
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
  return { included }
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function isRun(range: unknown): boolean {
  return Array.isArray(range) && range.length === 2 && range.every(isCount)
}

/** The encoded form of a `request/projection` event's data, as {@link isRequestProjection} checks it, for errors. */
export const REQUEST_PROJECTION_FORM = '{ turn, step, generation, include: [first, last][], surfaceNodes, includedNodes } '
  + 'of non-negative integers with an optional revision string and stale count'

/**
 * Whether a value has the shape of a `request/projection` event's data: what `Session.append` checks before the log
 * changes, as it checks a request header, and what a reader checks before decoding, since the log is input whatever
 * its declared type. Only the encoding is read; what the runs name is decoded against the surface (`projectedMessages`),
 * and a revision the host would not write today (see `normalizeSelection`) passes.
 * @param value - a projection's data.
 * @returns true when every count is a non-negative integer, `include` is `[first, last]` runs and `revision` a string.
 */
export function isRequestProjection(value: unknown): value is RequestProjection {
  if (typeof value !== 'object' || value === null) return false
  const data = value as Partial<Record<keyof RequestProjection, unknown>>
  return isCount(data.turn) && isCount(data.step) && isCount(data.generation)
    && isCount(data.surfaceNodes) && isCount(data.includedNodes)
    && (data.revision === undefined || typeof data.revision === 'string')
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
 * The messages a projected request sent, after decoding its projection against the request: position (turn and step),
 * surface generation, the runs ({@link decodeProjection}) and the counts.
 * @param index - the surface's message-bearing nodes at the request.
 * @param projection - the `request/projection` event the request consumed.
 * @param request - the request.
 * @returns the request messages, shared with the index.
 * @throws {ReplayError} naming what does not decode, the projection's seq, turn, step and revision.
 */
export function projectedMessages(index: SurfaceNodes, projection: SessionEvent<'request/projection'>, request: RequestAt): Message[] {
  const { seq } = projection
  const data: unknown = projection.data
  const at = request.seq === undefined ? 'the request' : `the request at seq ${request.seq}`
  if (!isRequestProjection(data)) {
    throw new ReplayError('malformed-projection', seq, `request/projection is not ${REQUEST_PROJECTION_FORM}`)
  }
  const position = { turn: data.turn, step: data.step, ...data.revision === undefined ? {} : { revision: data.revision } }
  if (data.turn !== request.turn || data.step !== request.step) {
    throw new ReplayError('projection-position', seq, `request/projection names turn ${data.turn} step ${data.step}, but ${at} is turn ${request.turn} step ${request.step}`, position)
  }
  if (data.generation !== request.generation) {
    throw new ReplayError('projection-generation', seq, `request/projection was made under surface generation ${data.generation}, but ${at} was sent under generation ${request.generation}`, position)
  }
  const checked = decodeProjection(index, data.include)
  if ('violation' in checked) throw new ReplayError(checked.violation.code, seq, `request/projection ${checked.violation.detail} (${at})`, position)
  if (data.surfaceNodes !== index.messages.length || data.includedNodes !== checked.included.length) {
    throw new ReplayError('projection-counts', seq, `request/projection counts ${data.includedNodes}/${data.surfaceNodes} nodes, but its runs select ${checked.included.length}/${index.messages.length} at ${at}`, position)
  }
  return checked.included.map(i => index.messages[i] as Message)
}
