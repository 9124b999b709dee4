/**
 * Which context modes the host can run. `agent-managed` needs the `agent/context` seam (patched agent loop) and a
 * compaction engine that measures pressure on the effective projection; without either it is unavailable and
 * enabling it fails, never degrading to a projection the host cannot honour.
 * @module @dsh-context/agent-tavern/capabilities
 */

import type { Context } from '@deepseek-ai/cordis'
import { hasAgentContextSeam } from '@dsh-context/agent-loop-patch'
import { AgentTavernError } from './errors.ts'
import type { ContextMode } from './mode.ts'

/** A host capability a mode depends on. */
export type TavernCapability = 'agent/context' | 'projection-aware-compaction'

/** Whether one mode can run, and what it lacks. */
export interface ModeAvailability {
  readonly available: boolean
  /** Missing capabilities, in a fixed order. */
  readonly missing: readonly TavernCapability[]
  /** One sentence per missing capability. */
  readonly reasons: readonly string[]
}

/** What {@link inspectCapabilities} reports. */
export interface TavernCapabilities {
  readonly native: ModeAvailability
  readonly managed: ModeAvailability
}

/** The `projectionAware` value the agreed compaction flag carries (`@dsh-context/compaction-effective-projection`). */
export const PROJECTION_AWARE_COMPACTION = 1

function hasProjectionAwareCompaction(ctx: Context): boolean {
  const compaction = ctx.get('compaction') as { projectionAware?: unknown } | undefined
  return compaction?.projectionAware === PROJECTION_AWARE_COMPACTION
}

/** Why each capability is missing; an empty list means present. */
function gaps(ctx: Context): Record<TavernCapability, string[]> {
  return {
    'agent/context': hasAgentContextSeam(ctx)
      ? []
      : ['the agent loop does not implement the agent/context seam (ctx.agentLoop.contextSeam !== 1)'],
    'projection-aware-compaction': hasProjectionAwareCompaction(ctx)
      ? []
      : ['no compaction engine measures pressure on the effective projection (ctx.compaction.projectionAware !== 1)'],
  }
}

/**
 * Inspect the host behind a context. `agent/context` is the seam's flag; `projection-aware-compaction` the agreed
 * compaction flag, duck-typed.
 * @param ctx - any context of the app, usually `agent.ctx`.
 * @returns `native` (always available) and `managed` with what it lacks.
 */
export function inspectCapabilities(ctx: Context): TavernCapabilities {
  const found = gaps(ctx)
  const missing = (Object.keys(found) as TavernCapability[]).filter(name => found[name].length > 0)
  return {
    native: { available: true, missing: [], reasons: [] },
    managed: { available: missing.length === 0, missing, reasons: missing.flatMap(name => found[name]) },
  }
}

/**
 * Fail unless the host can run a mode.
 * @param ctx - the agent's context.
 * @param agent - the agent's session id, for the message.
 * @param mode - the mode to run.
 * @throws {AgentTavernError} `mode-unavailable` naming the missing capabilities and why each is missing.
 */
export function assertModeAvailable(ctx: Context, agent: string, mode: ContextMode): void {
  if (mode === 'dsh-native') return
  const { managed } = inspectCapabilities(ctx)
  if (!managed.available) {
    throw new AgentTavernError('mode-unavailable', agent, `agent-managed is unavailable on this host: ${managed.reasons.join('; ')}`, managed.missing)
  }
}
