/**
 * The per-session context mode. The session's binding records it (`binding.ts`, `plugin.ts`), and a session without
 * one runs `dsh-native`.
 * @module @dsh-seam/agent-tavern/mode
 */

import { AgentTavernError } from './errors.ts'

/**
 * `dsh-native`: no `agent/context` listener, every request sends DSH's whole surface (stock behaviour).
 * `agent-managed`: the AgentTavern listener projects each request with the selection policy.
 */
export type ContextMode = 'dsh-native' | 'agent-managed'

/** Every context mode. */
const CONTEXT_MODES: readonly ContextMode[] = ['dsh-native', 'agent-managed']

/**
 * The one check of a context mode, for the config and for `setContextMode`.
 * @param value - an untrusted value.
 * @param agent - the agent's session id, when there is one.
 * @returns the mode.
 * @throws {AgentTavernError} `invalid-config` for anything that is not a mode.
 */
export function assertContextMode(value: unknown, agent?: string): ContextMode {
  if (CONTEXT_MODES.includes(value as ContextMode)) return value as ContextMode
  throw new AgentTavernError('invalid-config', agent, `contextMode ${JSON.stringify(value)} is not one of ${CONTEXT_MODES.map(mode => JSON.stringify(mode)).join(', ')}`)
}

/** Why a session asked for `agent-managed` and runs `dsh-native` instead. */
export interface ModeRefusal {
  /** The mode asked for. */
  readonly requested: ContextMode
  /** The refusal's `AgentTavernError` code. */
  readonly code: string
  /** One sentence per reason. */
  readonly reason: string
  /** Missing capabilities, when a capability was missing. */
  readonly missing: readonly string[]
}
