// The user of a multi-turn headless run of the `dsh` CLI: scripts/consumer-smoke/cli.sh adds it to the npm CLI's
// profile with `dsh plugin add file:<this folder>` (its @deepseek-ai/* imports then resolve, like any out-of-tree
// plugin's peers, to the CLI's own modules, $DSH_HOME/profiles/node_modules), and scripts/source-checkout's
// bundle-plugins.mjs bundles it against a source-built CLI. When a turn reaches its stop boundary
// (`agent/turn-stopping`) it queues the next line as a follow-up ("Turn N: <line>", cycling through `lines`) until
// `turns` turns have run; the headless runner waits for idle, so the whole session runs in one process. The headless
// profile mounts no console logger, so the run's logger warnings (AgentTavern's refusal of a mode) go to `warnings`.
import { appendFileSync } from 'node:fs'
import z from '@deepseek-ai/schemastery'
import { createUserMessage } from '@deepseek-ai/dsh-llm'

export const name = 'dsh-smoke-scripted-user'

export const Config = z.object({
  turns: z.natural().min(1).required().description('Turns in the session, the headless task being turn 1.'),
  lines: z.array(z.string()).min(1).required().description('Follow-up lines, cycled.'),
  warnings: z.string().description('A file every logger warning of the run is appended to, one line each.'),
})

export function apply(ctx, config) {
  if (config.warnings) {
    ctx.logger.exporter({
      levels: { default: 3 },
      export: message => message.type === 'warn' && appendFileSync(config.warnings, `${message.name}: ${message.args.map(String).join(' ')}\n`),
    })
  }
  ctx.on('agent/created', ({ agent }) => {
    const queued = new Set()
    agent.ctx.on('agent/turn-stopping', ({ turn }) => {
      if (turn >= config.turns || queued.has(turn)) return
      queued.add(turn)
      const line = config.lines[(turn - 1) % config.lines.length]
      agent.followup(createUserMessage({ content: [{ type: 'text', text: `Turn ${turn + 1}: ${line}` }], source: { kind: 'user' } }))
    })
  })
}
