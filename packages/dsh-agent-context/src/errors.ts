/**
 * The typed failure of a log whose requests do not replay.
 * @module @dsh-seam/agent-context/errors
 */

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
