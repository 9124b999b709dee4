/**
 * Typed failures of AgentTavern: each names the agent and what was wrong, and none falls back silently.
 * @module @dsh-seam/agent-tavern/errors
 */

/** Why AgentTavern refused to run or to change mode. */
export type AgentTavernErrorCode =
  /** The plugin was mounted on a context without an agent (it belongs on `agent.ctx` or in a preset). */
  | 'no-agent'
  /** A config field is out of range, or the shares leave no input budget. */
  | 'invalid-config'
  /** `agent-managed` was requested on a host that lacks a capability it needs; `missing` names them. */
  | 'mode-unavailable'
  /** A mode switch was requested while the agent was running a turn or maintenance task. */
  | 'agent-busy'
  /** `setContextMode` was called for an agent without AgentTavern mounted. */
  | 'not-mounted'
  /** The agent's route reports no context window, so the managed budget cannot be derived. */
  | 'no-context-window'
  /** `agent-managed` was requested, but the compaction service would summarize with a model and no curator allows it. */
  | 'hidden-summarizer'
  /**
   * Activating a mode the host cannot run (binding a session, switching it, or changing the default mode): refused
   * closed, nothing recorded, the current mode kept ({@link TavernArchitectureConflictError}).
   */
  | 'architecture-conflict'

/** A refused AgentTavern operation. */
export class AgentTavernError extends Error {
  override readonly name = 'AgentTavernError'

  /**
   * @param code - why it was refused.
   * @param agent - session id of the agent, when there is one.
   * @param detail - one sentence on what was wrong.
   * @param missing - the capabilities a `mode-unavailable` refusal lacks.
   * @param options - the underlying error, when one caused this.
   */
  constructor(
    readonly code: AgentTavernErrorCode,
    readonly agent: string | undefined,
    detail: string,
    readonly missing: readonly string[] = [],
    options?: ErrorOptions,
  ) {
    super(`AgentTavern${agent === undefined ? '' : ` for agent "${agent}"`}: ${detail}`, options)
  }
}

/**
 * Activation of a context mode refused closed, as the real app's `assertAgentTavernAvailable` refuses it (HTTP 409
 * `TAVERN_ARCHITECTURE_CONFLICT`): no binding, no session event, no registration, the current mode kept. `reason` is
 * the code of the check that failed (`mode-unavailable`, `hidden-summarizer`, `no-context-window`, `invalid-config`),
 * `missing` the capabilities it lacks; the failed check is the `cause`.
 */
export class TavernArchitectureConflictError extends AgentTavernError {
  /** The real app's HTTP status for this refusal. */
  readonly status = 409
  /** The real app's error code for this refusal. */
  readonly httpCode = 'TAVERN_ARCHITECTURE_CONFLICT'
  /** Why the mode cannot run. */
  readonly reason: AgentTavernErrorCode

  /**
   * @param agent - session id of the agent, when there is one.
   * @param mode - the mode whose activation was refused.
   * @param refusal - the failed check.
   */
  constructor(agent: string | undefined, mode: string, refusal: AgentTavernError) {
    super('architecture-conflict', agent, `cannot activate ${mode} (${refusal.code}): ${refusal.message.replace(/^AgentTavern[^:]*: /, '')}; nothing was recorded and the current mode is kept`, refusal.missing, { cause: refusal })
    this.reason = refusal.code
  }
}
