/**
 * Typed failures of the seam: a refused `agent/context` projection, and a log whose requests do not replay.
 * @module @dsh-seam/agent-context/errors
 */

/** Why a projection was refused. */
export type AgentContextErrorCode =
  /** The listener result is not an object with an `include` array, or reading it threw. */
  | 'invalid-selection'
  /** `include` holds a value that is not a safe non-negative integer. */
  | 'invalid-seq'
  /** `include` names a seq that never was a message-bearing node of this agent's surface. */
  | 'unknown-seq'
  /** `revision` is present but not a printable string of at most {@link MAX_REVISION_LENGTH} characters ({@link isValidRevision}). */
  | 'invalid-revision'
  /** A listener threw or rejected. */
  | 'listener-failed'
  /** The surface changed while listeners ran, twice in a row. */
  | 'surface-changed'

/**
 * The longest `revision` a listener may return, in characters as users count them (grapheme clusters: an emoji, a
 * flag or a letter with its accents is one); it is logged with every projected request.
 */
export const MAX_REVISION_LENGTH = 200

/** The most UTF-16 code units a revision may hold whatever its characters, so one cluster of stacked marks stays short. */
export const MAX_REVISION_UNITS = MAX_REVISION_LENGTH * 8

/** The revision rule in words, for errors. */
export const REVISION_RULE = `a printable string of at most ${MAX_REVISION_LENGTH} characters (grapheme clusters; at most ${MAX_REVISION_UNITS} UTF-16 code units)`

const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/**
 * Length as users count characters: grapheme clusters (`Intl.Segmenter`), so an emoji or a combined mark is one.
 * @param text - any string.
 * @returns its length in grapheme clusters.
 */
export function characterCount(text: string): number {
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

/** The most characters of a thrown value's description an error message carries. */
const MAX_FAILURE_CHARS = 500

/**
 * {@link describeValue}, cut to {@link MAX_FAILURE_CHARS} characters with the length it had.
 * @param value - an untrusted value.
 * @returns a bounded description.
 */
export function describeBounded(value: unknown): string {
  const text = describeValue(value)
  return text.length <= MAX_FAILURE_CHARS ? text : `${text.slice(0, MAX_FAILURE_CHARS)}… (${text.length} characters)`
}

/**
 * A refused `agent/context` projection, naming the agent, the listener revision and the offending values. The message
 * starts with `agent/context [<code>]`: DSH records a failed turn's error as text (`turn/end` `{ message, code:
 * 'UNKNOWN' }`), so the code reaches the log through the message.
 */
export class AgentContextError extends Error {
  override readonly name = 'AgentContextError'

  /**
   * @param code - why the projection was refused.
   * @param agent - the session id of the agent whose request it was.
   * @param revision - the listener's `revision`, when it supplied a valid one.
   * @param values - the offending values, at most the first eight are shown.
   * @param detail - one sentence on what was wrong.
   * @param failure - the thrown value behind `listener-failed` and unreadable results. It is kept on
   *   {@link AgentContextError.failure}, not as `cause`: DSH logs a failed turn's error with its whole cause chain, and
   *   the message already names it once, bounded.
   */
  constructor(
    readonly code: AgentContextErrorCode,
    readonly agent: string,
    readonly revision: string | undefined,
    readonly values: readonly unknown[],
    detail: string,
    readonly failure?: unknown,
  ) {
    const shown = values.length === 0 ? '' : `: ${values.slice(0, 8).map(describeValue).join(', ')}${values.length > 8 ? `, … (${values.length} in all)` : ''}`
    super(`agent/context [${code}] for agent ${JSON.stringify(agent)}${revision === undefined ? '' : ` (revision ${JSON.stringify(revision)})`} ${detail}${shown}`)
  }
}

/** `JSON.stringify` typed as it behaves: undefined for an object whose `toJSON` returns undefined. */
function jsonOf(value: object): string | undefined {
  return JSON.stringify(value)
}

/**
 * One line naming any value, whatever it is: a throwing getter, `toString` or proxy trap never escapes.
 * @param value - an untrusted value (a listener result or a thrown value).
 * @returns a short description.
 */
export function describeValue(value: unknown): string {
  try {
    if (typeof value === 'string') return JSON.stringify(value)
    if (typeof value === 'bigint') return `${value}n`
    if (typeof value === 'symbol') return value.toString()
    if (typeof value !== 'object' || value === null) return String(value)
    if (value instanceof Error) return `${value.name}: ${value.message}`
    return jsonOf(value) ?? Object.prototype.toString.call(value)
  } catch {
    // A cyclic value, a throwing getter or toString, a revoked proxy: its tag still names the offender.
    try {
      return Object.prototype.toString.call(value)
    } catch {
      return 'an unreadable value'
    }
  }
}

/** Why a log does not replay. */
export type ReplayErrorCode =
  /** An event's seq is not the previous seq plus one (the first event has seq 0). */
  | 'non-contiguous'
  /** A surface replace names a range that is not on the surface. */
  | 'invalid-surface'
  /** A `request/projection` event's fields are not the encoded form (ranges of seq pairs, integer counts). */
  | 'malformed-projection'
  /** A `request/projection` names another turn or step than the request that consumes it. */
  | 'projection-position'
  /** A `request/projection` was made under another surface generation than its request was sent under. */
  | 'projection-generation'
  /** A `request/projection`'s counts disagree with the nodes its ranges select on the surface. */
  | 'projection-counts'
  /** A host rule the projection breaks ({@link ProjectionViolationCode}). */
  | ProjectionViolationCode

/** Which host rule a logged projection breaks against the surface its request was sent from. */
export type ProjectionViolationCode =
  /** A range endpoint is not a message-bearing node of the surface (include ⊆ surface). */
  | 'foreign-seq'
  /** A range ends before it starts, or starts inside or before the previous range, in surface order. */
  | 'unordered-ranges'
  /** A required seq (the turn's input, a context snapshot, the continuing tool-call unit, the tail) is missing. */
  | 'required-missing'
  /** A tool-call unit is included in part. */
  | 'open-unit'
  /** The request opens with a node that is not user input although user input precedes it on the surface. */
  | 'opening'

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
