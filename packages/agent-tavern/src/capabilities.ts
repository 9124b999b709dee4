/**
 * Which context modes the host can run, in AgentTavern's shape: `native` needs the native prerequisites (the plugin
 * composed on an agent, an agent-scoped prompt, tool registration, durable session events); `managed` needs those
 * plus the `agent/context` seam and projection-aware compaction. Each is probed through what it adds to the host,
 * and a missing one makes its mode unavailable: enabling it fails, never degrading to a projection the host cannot
 * honour.
 * @module @dsh-seam/agent-tavern/capabilities
 */

import type { Context } from '@deepseek-ai/cordis'
import { hasAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import { hasProjectionAwareCompaction } from '@dsh-seam/compaction-effective-projection'
import { AgentTavernError } from './errors.ts'
import type { ContextMode } from './mode.ts'

/** A host capability a mode depends on (AgentTavern's names). */
export type TavernCapability =
  | 'preset'
  | 'scoped-prompt'
  | 'tools'
  | 'durable-events'
  | 'agent/context'
  | 'projection-aware-compaction'

/** Whether one mode can run, and what it lacks. */
export interface ModeAvailability {
  readonly available: boolean
  /** Missing capabilities: native prerequisites first, in a fixed order. */
  readonly missing: readonly TavernCapability[]
  /** One sentence per missing capability. */
  readonly reasons: readonly string[]
}

/** What {@link inspectCapabilities} reports. */
export interface TavernCapabilities {
  /** The preset AgentTavern composes agents from: the plugin's name. */
  readonly presetId: string
  readonly native: ModeAvailability
  readonly managed: ModeAvailability
  /** ISO 8601 time of the check. */
  readonly checkedAt: string
}

/** The preset id AgentTavern reports. */
const PRESET_ID = 'agent-tavern'

const NATIVE: readonly TavernCapability[] = ['preset', 'scoped-prompt', 'tools', 'durable-events']
const MANAGED: readonly TavernCapability[] = [...NATIVE, 'agent/context', 'projection-aware-compaction']

const REASONS: Record<TavernCapability, string> = {
  'preset': 'no agent loop composes agents with their own contexts (ctx.agentLoop), so AgentTavern cannot be mounted per agent',
  'scoped-prompt': 'no system prompt service with agent-scoped sections and contexts (ctx.systemPrompt.section/context)',
  'tools': 'no tool registry (ctx.tools.register)',
  'durable-events': 'no session store keeps durable session logs (ctx.sessions)',
  'agent/context': 'the agent loop does not implement the agent/context seam (hasAgentContextSeam)',
  'projection-aware-compaction': 'no compaction engine measures pressure on the effective projection (hasProjectionAwareCompaction)',
}

const isFunction = (value: unknown): boolean => typeof value === 'function'

/** Whether the host behind a context has one capability, probed through what it adds. */
function has(ctx: Context, capability: TavernCapability): boolean {
  switch (capability) {
    case 'preset':
      return ctx.agent !== undefined || ctx.get('agentLoop') !== undefined
    case 'scoped-prompt': {
      const prompt = ctx.get('systemPrompt') as { section?: unknown; context?: unknown } | undefined
      return isFunction(prompt?.section) && isFunction(prompt?.context)
    }
    case 'tools':
      return isFunction((ctx.get('tools') as { register?: unknown } | undefined)?.register)
    case 'durable-events':
      return ctx.get('sessions') !== undefined
    case 'agent/context':
      return hasAgentContextSeam(ctx)
    case 'projection-aware-compaction':
      return hasProjectionAwareCompaction(ctx)
  }
}

function availability(ctx: Context, needs: readonly TavernCapability[]): ModeAvailability {
  const missing = needs.filter(capability => !has(ctx, capability))
  return { available: missing.length === 0, missing, reasons: missing.map(capability => REASONS[capability]) }
}

/**
 * Inspect the host behind a context.
 * @param ctx - any context of the app, usually `agent.ctx`.
 * @returns both modes with what each lacks.
 */
export function inspectCapabilities(ctx: Context): TavernCapabilities {
  return { presetId: PRESET_ID, native: availability(ctx, NATIVE), managed: availability(ctx, MANAGED), checkedAt: new Date().toISOString() }
}

/**
 * Fail unless the host can run a mode.
 * @param ctx - the agent's context.
 * @param agent - the agent's session id, for the message.
 * @param mode - the mode to run.
 * @throws {AgentTavernError} `mode-unavailable` naming the missing capabilities and why each is missing.
 */
export function assertModeAvailable(ctx: Context, agent: string, mode: ContextMode): void {
  const found = inspectCapabilities(ctx)[mode === 'dsh-native' ? 'native' : 'managed']
  if (!found.available) {
    throw new AgentTavernError('mode-unavailable', agent, `${mode} is unavailable on this host: ${found.reasons.join('; ')}`, found.missing)
  }
}
