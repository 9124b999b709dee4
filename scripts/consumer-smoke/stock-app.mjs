// A plugin author's app on stock DeepSeek Harness 0.1.0-rc.8 from npm, with the packed public packages installed
// beside it: the packages import, the guard fails loud, AgentTavern refuses activating agent-managed closed (a typed
// architecture-conflict naming mode-unavailable, nothing bound) and, mounted dsh-native, runs 3 turns. Prints one JSON line of what it saw; run by scripts/consumer-smoke.sh in a fresh app.
import { Context } from '@deepseek-ai/cordis'
import agent from '@deepseek-ai/dsh-agent'
import agentLoop from '@deepseek-ai/dsh-agent-loop'
import compaction from '@deepseek-ai/dsh-compaction-basic'
import llm, { createUserMessage, LlmAdapter } from '@deepseek-ai/dsh-llm'
import session, { SessionId } from '@deepseek-ai/dsh-session'
import systemPrompt from '@deepseek-ai/dsh-system-prompt'
import tokenMeter from '@deepseek-ai/dsh-token-meter'
import tools from '@deepseek-ai/dsh-tools'
import { AgentTavern, contextModeOf } from '@dsh-seam/agent-tavern'
import { assertAgentContextSeam, hasAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import '@dsh-seam/agent-context'
import '@dsh-seam/compaction-effective-projection'
import '@dsh-seam/cli'

class Scripted extends LlmAdapter {
  requests = 0
  resolveModel(provider, model) {
    return Promise.resolve({ provider, id: model, name: model, context: { contextWindow: 32_000 } })
  }
  async * stream() {
    const text = `Reply ${++this.requests}.`
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text }
    yield { type: 'block-end', index: 0, block: { type: 'text', text } }
    yield { type: 'finish', reason: { kind: 'stop' } }
  }
}

const ctx = new Context()
for (const plugin of [llm, session, [systemPrompt, { persona: 'You are Mira.' }], [tools, {}], agent, tokenMeter, [agentLoop, { agents: [] }], compaction]) {
  const [p, config] = Array.isArray(plugin) ? plugin : [plugin]
  await ctx.plugin(p, config)
}
const adapter = new Scripted()
ctx.llm.registerAdapter(['fake'], adapter)
const errors = []
ctx.on('agent/error', ({ error }) => { errors.push(String(error)) })

const seen = { hasSeam: hasAgentContextSeam(ctx) }
try {
  assertAgentContextSeam(ctx, 'my-policy')
  seen.guard = 'passed'
} catch (error) {
  seen.guard = { name: error.name, missing: error.missing }
}
const mira = ctx.agentLoop.create(SessionId('stock-app'), { provider: 'fake', model: 'fake-model' })
const character = { name: 'Mira', identity: 'The ferrywoman.' }
// Activating agent-managed on stock DSH is refused closed (nothing bound or recorded); dsh-native then mounts.
const mounted = contextMode => Promise.resolve(mira.ctx.plugin(AgentTavern, { character, contextMode }))
seen.refusal = await mounted('agent-managed').then(() => 'mounted', ({ code, reason, missing }) => ({ code, reason, missing }))
await mounted('dsh-native')
seen.mode = contextModeOf(mira)
for (const text of ['one', 'two', 'three']) {
  mira.followup(createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } }))
  await mira.whenIdle()
}
seen.turns = mira.session.events.filter(event => event.type === 'turn/end').length
seen.requests = adapter.requests
seen.errors = errors
console.log(JSON.stringify(seen))
