/**
 * The deployment row of AgentTavern's DSH bundle (`cordis.patch.yml`, `name: '@dsh-seam/agent-tavern/host'`): mounts
 * AgentTavern, with this row's config, on the agents whose sessions are bound to it, as the real app touches only
 * sessions bound `architecture: 'agent-tavern'`. A session bound `st`, or a group chat, is left alone, and so is every
 * unbound agent, unless `bindNewSessions` binds each new top-level session (the DSH CLI has no bind command; a
 * subagent is never bound this way). Bindings live in the app's binding store (`bindingsFile`, else memory).
 *
 * The agent's first turn waits for the mount, so no turn starts before AgentTavern has bound the session and entered
 * its mode. A mount that fails fails every step with AgentTavern's error and sends no request: a misconfiguration
 * (`invalid-config`), or an activation the host cannot run (`architecture-conflict`, the real app's HTTP 409
 * `TAVERN_ARCHITECTURE_CONFLICT`), which binds nothing and records nothing.
 * @module @dsh-seam/agent-tavern/host
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import z from '@deepseek-ai/schemastery'
import { tavernBindings } from './binding.ts'
import { logOf } from './host-log.ts'
import type { Config as TavernConfig } from './config.ts'
import { Config as TavernSchema } from './config.ts'
import * as AgentTavern from './plugin.ts'

/** Plugin name. */
export const name = 'agent-tavern-host'

/** The row's config: AgentTavern's own (validated again by each agent's mount), and which sessions it serves. */
export interface Config extends TavernConfig {
  /** Bind every new top-level session with no turns to AgentTavern (the CLI bundle's row); off, only bound ones. */
  readonly bindNewSessions: boolean
  /** The JSON file the app's session bindings and their modes are kept in; in memory when empty. */
  readonly bindingsFile: string
}

/** Services the row uses: the agent registry tells top-level agents from subagents. */
export const inject = ['agents']

/** Config schema. */
export const Config: z<Config> = z.intersect([
  TavernSchema,
  z.object({
    bindNewSessions: z.boolean().default(false).description('Bind every new top-level session to AgentTavern.'),
    bindingsFile: z.string().default('').description('JSON file of the session bindings (empty: in memory).'),
  }),
])

/**
 * Whether the row serves an agent: its session is bound to AgentTavern (not `st`, not a group chat), or it is a new
 * top-level session and the row binds those.
 */
function serves(ctx: Context, agent: Agent, config: Config): boolean {
  const binding = tavernBindings(ctx).get(String(agent.id))
  if (binding !== undefined) return binding.architecture === 'agent-tavern' && binding.group !== true
  return config.bindNewSessions && !logOf(agent.session).some(event => event.type === 'turn/start') && ctx.agents.roots().includes(agent)
}

/**
 * Mount AgentTavern on every bound agent created from now on.
 * @param ctx - the app context (a deployment row).
 * @param config - AgentTavern's config, given to every bound agent, and the binding rules.
 */
export function apply(ctx: Context, config: Config): void {
  const { bindNewSessions: _bind, bindingsFile, ...tavern } = config
  tavernBindings(ctx, bindingsFile.length === 0 ? undefined : bindingsFile)
  ctx.on('agent/created', ({ agent }) => {
    if (!serves(ctx, agent, config)) return
    const mounted = agent.ctx.plugin(AgentTavern, tavern)
    // Hold the first turn until the mount has bound the session and entered its mode (a maintenance task claims the
    // idle phase; queued input waits in the inbox). The task never fails: a failed mount fails the step below instead.
    void agent.runMaintenance(async () => {
      await Promise.resolve(mounted).catch(() => {})
    })
    agent.ctx.on('agent/pre-step', async (_payload, next) => {
      await mounted
      return next()
    })
  })
}
