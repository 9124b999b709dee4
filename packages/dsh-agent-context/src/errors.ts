/**
 * Typed failure of an `agent/context` projection. Each one is a listener bug or
 * a surface that moved under the listener; the loop ends the turn with it and
 * sends nothing to the model.
 * @module @dsh-context/agent-context/errors
 */

/** Why a projection was refused. */
export type AgentContextErrorCode =
  /** The listener result is not an object with an `include` array. */
  | 'invalid-selection'
  /** `include` holds a value that is not a safe non-negative integer. */
  | 'invalid-seq'
  /** `include` names a seq that is not a message-bearing node of this agent's current surface. */
  | 'unknown-seq'
  /** `revision` is present but not a string. */
  | 'invalid-revision'
  /** A listener threw or rejected. */
  | 'listener-failed'
  /** The surface changed while listeners ran, twice in a row. */
  | 'surface-changed'

/** A refused `agent/context` projection, naming the agent, the listener revision and the offending values. */
export class AgentContextError extends Error {
  override readonly name = 'AgentContextError'

  /**
   * @param code - why the projection was refused.
   * @param agent - the session id of the agent whose request it was.
   * @param revision - the listener's `revision`, when it supplied a string one.
   * @param values - the offending values, at most the first eight.
   * @param detail - one sentence on what was wrong.
   * @param options - the underlying error for `listener-failed`.
   */
  constructor(
    readonly code: AgentContextErrorCode,
    readonly agent: string,
    readonly revision: string | undefined,
    readonly values: readonly unknown[],
    detail: string,
    options?: ErrorOptions,
  ) {
    const shown = values.length === 0 ? '' : `: ${values.slice(0, 8).map(show).join(', ')}${values.length > 8 ? `, … (${values.length} in all)` : ''}`
    super(`agent/context for agent "${agent}"${revision === undefined ? '' : ` (revision "${revision}")`} ${detail}${shown}`, options)
  }
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value)
    } catch {
      // A cyclic or otherwise unserializable value: its tag still names the offender.
      return Object.prototype.toString.call(value)
    }
  }
  return String(value)
}
