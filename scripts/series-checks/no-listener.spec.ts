/**
 * One scripted conversation on the real loop with no `agent/context` listener, written as canonical JSON (every
 * request the adapter received, then the whole session log) to the file `NO_LISTENER_OUT` names. series-checks runs
 * it on the unmodified base and on the series' last step, in DSH's own tree, and compares the two files byte for
 * byte. Times and generated message ids are the only values that differ between runs: times are zeroed and ids
 * replaced by their order of appearance.
 */

import { writeFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { Context } from '@deepseek-ai/cordis'
import AgentRegistry from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import LlmRuntime, { createUserMessage } from '@deepseek-ai/dsh-llm'
import SessionStore, { SessionId } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime, { defineContentToolFixture } from '@deepseek-ai/dsh-tools'
import { MockAdapter, textResponse, toolCallResponse } from './mock-adapter.ts'

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g

/** JSON with sorted keys, `time` values zeroed and generated ids replaced by their order of appearance. */
function canonical(value: unknown): string {
  const json = JSON.stringify(value, (key, v: unknown) => {
    if (key === 'time' && typeof v === 'number') return 0
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
  })
  const ids = new Map<string, number>()
  return json.replace(UUID, id => `id-${ids.get(id) ?? ids.set(id, ids.size).get(id)}`)
}

it('records what a loop without an agent/context listener sends and logs', async () => {
  const out = process.env['NO_LISTENER_OUT']
  if (out === undefined) throw new Error('NO_LISTENER_OUT names no file')
  const adapter = new MockAdapter([
    textResponse('Hello there.'),
    toolCallResponse('call-1', 'echo', { text: 'a' }),
    textResponse('Echoed a.'),
    toolCallResponse('call-2', 'echo', { text: 'b' }),
    toolCallResponse('call-3', 'echo', { text: 'c' }),
    textResponse('Done.'),
  ])
  const ctx = new Context()
  for (const [plugin, config] of [[LlmRuntime], [SessionStore], [SystemPrompt], [ToolRuntime], [AgentRegistry], [AgentLoop, { agents: [] }]] as const) {
    await ctx.plugin(plugin as never, config as never)
  }
  ctx.llm.registerAdapter(['mock'], adapter)
  ctx.tools.register(defineContentToolFixture({
    name: 'echo',
    description: 'echo back',
    parameters: { text: { type: 'string' } },
    async execute(args) {
      return [{ type: 'text', text: `echo: ${String(args.text)}` }]
    },
  }))
  const agent = ctx.agentLoop.create(SessionId('no-listener'), { provider: 'mock', model: 'mock' })
  for (const text of ['hi', 'echo a', 'echo b then c']) {
    agent.followup(createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } }))
    await agent.whenIdle()
  }
  expect(adapter.requests).toHaveLength(6)
  expect(agent.session.events.some(event => event.type === 'turn/end' && event.data.reason.kind === 'error')).toBe(false)
  const requests = adapter.requests.map(({ signal: _signal, ...request }) => request)
  writeFileSync(out, `${canonical(requests)}\n${canonical(agent.session.events)}\n`)
})
