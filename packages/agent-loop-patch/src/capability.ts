/**
 * Runtime capability flag of the seam.
 * @module @dsh-context/agent-loop-patch/capability
 */

import type { Context } from '@deepseek-ai/cordis'

/** The seam version the patched loop reports as `ctx.agentLoop.contextSeam`. */
export const AGENT_CONTEXT_SEAM = 1

/**
 * Whether the agent loop service in `ctx` implements the `agent/context` seam of {@link AGENT_CONTEXT_SEAM}.
 * @param ctx - any context of the app.
 * @returns false on a stock DSH build or without an agent loop.
 */
export function hasAgentContextSeam(ctx: Context): boolean {
  const loop = ctx.get('agentLoop') as { contextSeam?: unknown } | undefined
  return loop?.contextSeam === AGENT_CONTEXT_SEAM
}
