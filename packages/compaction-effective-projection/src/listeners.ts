/**
 * Whether an agent's requests are projected: some `agent/context` listener other than this engine's admits it.
 * @module @dsh-context/compaction-effective-projection/listeners
 */

import type { Context } from '@deepseek-ai/cordis'
import { Context as CordisContext } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { agentCarrier } from '@deepseek-ai/dsh-agent'

type Filter = (this: object, ctx: Context) => boolean

const OWNER = Symbol('compaction-effective-projection.owner')

/**
 * A child context whose listeners {@link hasContextListener} attributes to `owner`.
 * @param ctx - the owner's plugin context.
 * @param owner - the object the listeners belong to.
 * @returns the context to register the owner's listeners through.
 */
export function ownedContext(ctx: Context, owner: object): Context {
  return ctx.extend({ [OWNER]: owner })
}

/**
 * Whether `agent/context` has a listener for `agent` that `owner` did not register through {@link ownedContext}.
 * Reads the hook table with the filter `EventsService.dispatch` applies to the agent's scope carrier (global hooks,
 * unscoped hooks, and hooks scoped to the agent or its ancestors), without dispatching, so no `internal/dispatch` is
 * reported.
 * @param ctx - any context of the app.
 * @param agent - the agent whose requests are asked about.
 * @param owner - the owner whose listeners do not count.
 * @returns true when another listener would run for the agent's next request.
 */
export function hasContextListener(ctx: Context, agent: Agent, owner: object): boolean {
  const hooks = ctx.events._hooks['agent/context'] ?? []
  const carrier = agentCarrier(agent) as unknown as { [CordisContext.filter]?: Filter }
  const filter = carrier[CordisContext.filter]
  return hooks.some(hook => (hook.ctx as { [OWNER]?: object })[OWNER] !== owner
    && (hook.global === true || filter === undefined || filter.call(carrier, hook.ctx)))
}
