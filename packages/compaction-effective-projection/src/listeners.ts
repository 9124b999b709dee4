/**
 * Whether an agent's requests are projected: some `agent/context` listener other than this engine's admits it.
 * @module @dsh-context/compaction-effective-projection/listeners
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { hasContextListener } from '@dsh-context/agent-loop-patch'

const OWNER = Symbol('compaction-effective-projection.owner')

/**
 * A child context whose listeners {@link hasForeignContextListener} does not count for `owner`.
 * @param ctx - the owner's plugin context.
 * @param owner - the object the listeners belong to.
 * @returns the context to register the owner's listeners through.
 */
export function ownedContext(ctx: Context, owner: object): Context {
  return ctx.extend({ [OWNER]: owner })
}

/**
 * Whether `agent/context` has a listener for `agent` that `owner` did not register through {@link ownedContext}.
 * @param agent - the agent whose requests are asked about.
 * @param owner - the owner whose listeners do not count.
 * @returns true when another listener would run for the agent's next request.
 */
export function hasForeignContextListener(agent: Agent, owner: object): boolean {
  return hasContextListener(agent, hookCtx => (hookCtx as { [OWNER]?: object })[OWNER] === owner)
}
