/**
 * The rule a logged `request/projection` revision obeys, and the typed failure of a log whose requests do not replay.
 * @module @dsh-seam/agent-context/errors
 */

/**
 * The longest `revision` a listener may return, in characters as users count them (grapheme clusters: an emoji, a
 * flag or a letter with its accents is one); it is logged with every projected request.
 */
export const MAX_REVISION_LENGTH = 200

/** The most UTF-16 code units a revision may hold whatever its characters, so one cluster of stacked marks stays short. */
const MAX_REVISION_UNITS = MAX_REVISION_LENGTH * 8

/** The revision rule in words, for errors. */
export const REVISION_RULE = `a printable string of at most ${MAX_REVISION_LENGTH} characters (grapheme clusters; at most ${MAX_REVISION_UNITS} UTF-16 code units)`

const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/**
 * Length as users count characters: grapheme clusters (`Intl.Segmenter`), so an emoji or a combined mark is one.
 * @param text - any string.
 * @returns its length in grapheme clusters.
 */
function characterCount(text: string): number {
  let count = 0
  for (const _ of graphemes.segment(text)) count++
  return count
}

/**
 * Whether a `revision` may be logged: {@link REVISION_RULE} (no control characters, lone surrogates or line
 * separators). The one rule for the host on write and for log readers on read.
 * @param revision - the untrusted value.
 * @returns true for a valid revision.
 */
export function isValidRevision(revision: unknown): revision is string {
  return typeof revision === 'string' && revision.length <= MAX_REVISION_UNITS && !UNPRINTABLE.test(revision)
    && (revision.length <= MAX_REVISION_LENGTH || characterCount(revision) <= MAX_REVISION_LENGTH)
}

/**
 * A refused revision as an error shows it: its first 40 UTF-16 code units with its size in the unit that refused it
 * ({@link isValidRevision}).
 * @param revision - a revision {@link isValidRevision} refused.
 * @returns what the error lists.
 */
export function refusedRevision(revision: string): string {
  const size = revision.length > MAX_REVISION_UNITS ? `${revision.length} UTF-16 code units` : `${characterCount(revision)} characters`
  return `${revision.slice(0, 40)}${revision.length > 40 ? '…' : ''} (${size})`
}

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
