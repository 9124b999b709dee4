/**
 * Which `agent/context` listeners would run for an agent, read from cordis' hook table with the filter its dispatch
 * applies to the agent's scope carrier, without dispatching.
 * @module @dsh-seam/agent-loop-patch/listeners
 */

import type { Context } from '@deepseek-ai/cordis'
import { Context as CordisContext } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { agentCarrier } from '@deepseek-ai/dsh-agent'

type Filter = (this: object, ctx: Context) => boolean

/**
 * Whether an `agent/context` listener would run for `agent`: global hooks, unscoped hooks, and hooks scoped to the
 * agent (its `ctx`, presets and plugins mounted in its scope).
 * @param agent - the agent whose next request is asked about.
 * @returns true when some listener would run.
 */
export function hasContextListener(agent: Agent): boolean {
  const hooks = agent.ctx.events._hooks['agent/context'] ?? []
  if (hooks.length === 0) return false
  const admits = scopeOf(agent)
  return hooks.some(hook => hook.global === true || admits(hook.ctx))
}

/** The filter the agent's scope-filtered dispatch applies to a hook's registering context. */
function scopeOf(agent: Agent): (hookCtx: Context) => boolean {
  const carrier = agentCarrier(agent) as unknown as { [CordisContext.filter]?: Filter }
  const filter = carrier[CordisContext.filter]
  return hookCtx => filter === undefined || filter.call(carrier, hookCtx)
}
