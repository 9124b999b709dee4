// A deployment row for DSH's headless profile that mounts AgentTavern on every agent the app creates. The headless
// bundle composes no agent-preset roster, so the row a preset folder would hold (packages/agent-tavern/cordis.yml)
// is mounted here, on each agent's own context, when the agent is published. The tavern's mount settles before the
// agent's first step: a mount that fails (AgentTavern's `mode-unavailable` on a host without the agent/context seam
// or projection-aware compaction) fails that step with AgentTavern's error, so nothing is sent unmanaged.
// Bundled with @dsh-seam/agent-tavern by bundle-plugins.mjs; @deepseek-ai/* stay the checkout's own modules.
import z from '@deepseek-ai/schemastery'
import { AgentTavern } from '@dsh-seam/agent-tavern'

export const name = 'agent-tavern-host'

/** `tavern`: AgentTavern's own config, validated by AgentTavern when it mounts. */
export const Config = z.object({
  tavern: z.dict(z.any()).required().description('AgentTavern config (packages/agent-tavern/cordis.yml).'),
})

export function apply(ctx, config) {
  ctx.on('agent/created', ({ agent }) => {
    const mounted = agent.ctx.plugin(AgentTavern, config.tavern)
    agent.ctx.on('agent/pre-step', async (_payload, next) => {
      await mounted
      return next()
    })
  })
}
