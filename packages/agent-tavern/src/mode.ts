/**
 * The per-session context mode and its session event. The mode is recorded by the newest
 * `agent-tavern/context-mode` event and the session's binding (the newer decides; `plugin.ts`), and a session with
 * neither runs `dsh-native`. The event is appended `ignorable`, so a DSH build without AgentTavern keeps it and still
 * resumes the log.
 * @module @dsh-seam/agent-tavern/mode
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'
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

/** The session event type that records a mode switch. */
export const CONTEXT_MODE_EVENT = 'agent-tavern/context-mode'

/** A recorded mode switch. */
export interface ContextModeChange {
  /** The mode from this event on. */
  mode: ContextMode
  /** The mode before it. */
  previous: ContextMode
  /** The last turn that ended before the switch (0 before the first turn). */
  afterTurn: number
  /** Present when the session asked for another mode at mount and the host refused it. */
  refused?: ModeRefusal
}

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /**
     * AgentTavern's context mode from this event on, appended only while the agent is idle between turns. Log-only:
     * requests are rebuilt from `request/projection`, never from the mode.
     */
    'agent-tavern/context-mode': ContextModeChange
  }
}

/**
 * The last turn a log closed.
 * @param events - a session log.
 * @returns the turn of the newest `turn/end`, 0 when none.
 */
export function lastEndedTurn(events: readonly SessionEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as SessionEvent
    if (event.type === 'turn/end') return event.data.turn
  }
  return 0
}
