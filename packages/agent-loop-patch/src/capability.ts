/**
 * Runtime detection of the seam through what it adds: the `request/projection` session event type.
 * @module @dsh-context/agent-loop-patch/capability
 */

import type { Context } from '@deepseek-ai/cordis'
import { KNOWN_SESSION_EVENT_TYPES } from '@deepseek-ai/dsh-session'

/** The seam version this package implements (the `agent/context` payload and `request/projection` format). */
export const AGENT_CONTEXT_SEAM = 1

/**
 * Whether the app in `ctx` runs an agent loop with the `agent/context` seam. The seam's dsh-session declares the
 * `request/projection` event, so a build whose `KNOWN_SESSION_EVENT_TYPES` lists it has the seam; a stock build does
 * not, and refuses logs that carry the event.
 * @param ctx - any context of the app.
 * @returns false on a stock DSH build or without an agent loop.
 */
export function hasAgentContextSeam(ctx: Context): boolean {
  return ctx.get('agentLoop') !== undefined && KNOWN_SESSION_EVENT_TYPES.has('request/projection')
}
