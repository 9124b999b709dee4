// A plugin author's own app on the patched DSH 0.1.0-rc.8 packages, importing only published packages: a real
// AgentLoop with DSH's invariants, an offline adapter, a tool, JSONL persistence and a keep-last-3-turns
// `agent/context` listener, 10 turns. Prints one JSON line the smoke test checks; the session log path is `log`.
// Usage (in the app's folder): node patched-app.mjs <persist-root>
import { Context } from '@deepseek-ai/cordis'
import agent from '@deepseek-ai/dsh-agent'
import agentLoop, { AgentContextError } from '@deepseek-ai/dsh-agent-loop'
import * as agentLoopInvariant from '@deepseek-ai/dsh-agent-loop/invariant'
import invariants from '@deepseek-ai/dsh-invariants'
import llm, { createUserMessage } from '@deepseek-ai/dsh-llm'
import session, { SessionId } from '@deepseek-ai/dsh-session'
import * as sessionInvariant from '@deepseek-ai/dsh-session/invariant'
import jsonl from '@deepseek-ai/dsh-session-persistence-jsonl'
import systemPrompt from '@deepseek-ai/dsh-system-prompt'
import tokenMeter from '@deepseek-ai/dsh-token-meter'
import tools, { defineTool } from '@deepseek-ai/dsh-tools'
import { firstRequestDivergence } from '@dsh-seam/agent-context'
import { assertAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { MyModel } from './my-model.js'

const root = process.argv[2]
const model = new MyModel()

const ctx = new Context()
await ctx.plugin(invariants, { enabled: true }) // DSH's runtime invariants, with the session and loop companions
await ctx.plugin(sessionInvariant)
await ctx.plugin(agentLoopInvariant)
for (const [plugin, config] of [[llm], [session], [jsonl, { root, compression: 'none' }], [systemPrompt, { persona: 'A ferry pilot.' }],
  [tools, {}], [agent], [tokenMeter], [agentLoop, { agents: [] }]]) await ctx.plugin(plugin, config)
ctx.llm.registerAdapter(['offline'], model)
ctx.tools.register(defineTool({
  name: 'lookup',
  description: 'Look a topic up.',
  parameters: { topic: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
  execute: async ({ topic }) => `notes on ${topic}`,
}))

assertAgentContextSeam(ctx, 'keep-last-3-turns') // throws on a stock DSH build, where the listener would never run
const pilot = ctx.agentLoop.create(SessionId('pilot'), { provider: 'offline', model: 'offline-model' })
pilot.ctx.on('agent/context', async (request, next) => {
  const all = await next()
  const start = pilot.session.events.findLast(e => e.type === 'turn/start' && e.data.turn === request.turn - 2)?.seq ?? 0
  return { include: all.include.filter(seq => seq >= start), revision: 'keep-last-3-turns' }
})

const user = text => createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } })
for (let turn = 1; turn <= 10; turn++) {
  pilot.followup(user(`This is turn ${turn}.`))
  await pilot.whenIdle()
}
await ctx.sessions.flush(pilot.session)
const { requests } = model
const events = pilot.session.events
const log = readdirSync(root, { recursive: true }).map(String).find(file => file.endsWith('session.jsonl'))
console.log(JSON.stringify({
  turns: events.filter(e => e.type === 'turn/end' && e.data.reason.kind === 'completed').length,
  toolCalls: events.filter(e => e.type === 'tool/call').length,
  requests: requests.length,
  projections: events.filter(e => e.type === 'request/projection').length,
  maxSent: Math.max(...requests.map(r => r.messages.length)),
  surface: pilot.session.deriveMessages().length,
  divergence: firstRequestDivergence(events, requests) ?? null,
  hostError: typeof AgentContextError === 'function',
  log: log === undefined ? null : join(root, log),
}))
await ctx.fiber.dispose()
