/**
 * The deployment row of AgentTavern's DSH bundle (`cordis.patch.yml`, `name: '@dsh-seam/agent-tavern/host'`): mounts
 * AgentTavern, with this row's config, on the context of every agent the app creates. DSH's CLI profiles (headless,
 * web) compose no AgentTavern preset, so the row a preset would hold (`cordis.yml`) is mounted here, on each agent's
 * own context, when the agent is published (`agent/created`). The agent's first turn waits for the mount, so no
 * turn starts before AgentTavern has decided the session's mode; a mount that fails (a config AgentTavern refuses)
 * fails every step with AgentTavern's error. A mode the host cannot run does not fail: the session runs `dsh-native`
 * and the refusal is warned and kept (`contextModeRefusal`).
 * @module @dsh-seam/agent-tavern/host
 */

import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-agent'
import type { Config as TavernConfig } from './config.ts'
import { Config as ConfigSchema } from './config.ts'
import * as AgentTavern from './plugin.ts'

/** Plugin name. */
export const name = 'agent-tavern-host'

/** Config schema: AgentTavern's own, validated once here and again by each agent's mount. */
export const Config = ConfigSchema

/**
 * Mount AgentTavern on every agent created from now on.
 * @param ctx - the app context (a deployment row).
 * @param config - AgentTavern's config, given to every agent.
 */
export function apply(ctx: Context, config: TavernConfig): void {
  ctx.on('agent/created', ({ agent }) => {
    const mounted = agent.ctx.plugin(AgentTavern, config)
    // Hold the first turn until the mount has read the log and recorded the mode (a maintenance task claims the idle
    // phase; queued input waits in the inbox), so a fresh session starts in `contextMode` and the mode event is
    // appended between turns. The task never fails: a failed mount fails the step below instead.
    void agent.runMaintenance(async () => {
      await Promise.resolve(mounted).catch(() => {})
    })
    agent.ctx.on('agent/pre-step', async (_payload, next) => {
      await mounted
      return next()
    })
  })
}
