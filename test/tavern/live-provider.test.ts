/**
 * The demo's live-provider wiring, offline: the model choice by `DEEPSEEK_API_KEY`; DSH's DeepSeek adapter
 * (`@deepseek-ai/dsh-llm-deepseek@0.1.0-rc.8`) mounted on the patched loop with a fake key, answering its metadata
 * calls without I/O; and the whole live session and `bin/demo.mjs` against a loopback server speaking DeepSeek's
 * chat-completions SSE (`DEEPSEEK_BASE_URL`), so no request leaves the machine.
 */

import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { contextModeOf, inspectCapabilities, TOOL_NAMES } from '@dsh-seam/agent-tavern'
import type { LiveReport } from '@dsh-seam/agent-tavern-demo'
import { bootLiveLoop, demoModel, LIVE_DEFAULTS, LIVE_PROVIDER, mountTavern, runLive } from '@dsh-seam/agent-tavern-demo'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

const FAKE_KEY = 'sk-offline-test-key'

describe('the demo model choice', () => {
  it('is the scripted model without DEEPSEEK_API_KEY, with a blank one, or when forced', () => {
    expect(demoModel({})).toEqual({ kind: 'scripted' })
    expect(demoModel({ DEEPSEEK_API_KEY: '  ' })).toEqual({ kind: 'scripted' })
    expect(demoModel({ DEEPSEEK_API_KEY: FAKE_KEY }, { scripted: true })).toEqual({ kind: 'scripted' })
  })

  it('is DeepSeek on the adapter route with a key, deepseek-v4-flash unless a model is named', () => {
    expect(demoModel({ DEEPSEEK_API_KEY: FAKE_KEY })).toEqual({ kind: 'live', provider: 'deepseek-official', model: 'deepseek-v4-flash' })
    expect(demoModel({ DEEPSEEK_API_KEY: FAKE_KEY }, { model: 'deepseek-v4-pro' })).toMatchObject({ model: 'deepseek-v4-pro' })
  })
})

describe('the live loop, mounted offline with a fake key', () => {
  it('registers the deepseek-official route and answers metadata without a request', async () => {
    const live = await bootLiveLoop({ env: { DEEPSEEK_API_KEY: FAKE_KEY }, contextWindow: 24_000, maxTokens: 512 })
    const { llm } = live.loop.ctx
    expect(llm.listProviders().map(provider => provider.id)).toContain(LIVE_PROVIDER)
    expect(llm.listConfigurableProviders()).toContainEqual(expect.objectContaining({ provider: LIVE_PROVIDER, settingsNs: 'llm-deepseek' }))
    const info = await llm.resolveModelInfo(LIVE_PROVIDER, LIVE_DEFAULTS.model)
    expect(info).toMatchObject({ provider: LIVE_PROVIDER, id: 'deepseek-v4-flash', context: { contextWindow: 24_000 }, defaultMaxTokens: 512 })
    expect(info.reasoning?.defaultEffort).toBe('off')
    expect(await llm.resolveCallConfig({ provider: LIVE_PROVIDER, model: LIVE_DEFAULTS.model })).toMatchObject({ maxTokens: 512, reasoningEffort: 'off' })
    expect(live.route).toMatchObject({ provider: LIVE_PROVIDER, model: 'deepseek-v4-flash', baseURL: 'https://api.deepseek.com', contextWindow: 24_000 })

    const agent = live.create('live-offline')
    expect(inspectCapabilities(live.loop.ctx).managed).toMatchObject({ available: true, missing: [] })
    expect(await mountTavern(agent, 'agent-managed', { policy: { blockTokens: LIVE_DEFAULTS.blockTokens } })).toBeUndefined()
    expect(contextModeOf(agent)).toBe('agent-managed')
    expect(live.requests).toEqual([])
    expect(live.loop.adapter.requests).toEqual([])
  })

  it('takes DEEPSEEK_BASE_URL from the given environment, a blank one as unset', async () => {
    const live = await bootLiveLoop({ env: { DEEPSEEK_API_KEY: FAKE_KEY, DEEPSEEK_BASE_URL: 'http://127.0.0.1:9' } })
    expect(live.route).toMatchObject({ baseURL: 'http://127.0.0.1:9', contextWindow: LIVE_DEFAULTS.contextWindow, maxTokens: LIVE_DEFAULTS.maxTokens })
    const blank = await bootLiveLoop({ env: { DEEPSEEK_API_KEY: FAKE_KEY, DEEPSEEK_BASE_URL: ' ' } })
    expect(blank.route.baseURL).toBe('https://api.deepseek.com')
  })
})

/** One request the loopback server received. */
interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: { model: string; stream: boolean; max_tokens?: number; thinking?: unknown; messages: WireMessage[]; tools?: { function: { name: string } }[] }
}

interface WireMessage {
  role: string
  content: string | null
  tool_calls?: unknown[]
}

const sse = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`

/** Usage the server reports for its `n`-th reply (1-based): distinct, checkable figures. */
const wireUsage = (n: number): { prompt_tokens: number; completion_tokens: number; prompt_cache_hit_tokens: number; prompt_cache_miss_tokens: number } =>
  ({ prompt_tokens: 1000 + n, completion_tokens: 10 + n, prompt_cache_hit_tokens: 100 * (n - 1), prompt_cache_miss_tokens: 1000 + n - 100 * (n - 1) })

/**
 * A loopback DeepSeek: answers a tool result with its text (also when a runtime-context snapshot follows it), a new user message asking "do you remember" with a
 * `tavern_history_search` call, anything else with narration.
 */
function replyTo(body: Received['body'], n: number): string {
  const { messages } = body
  const lastAssistant = messages.findLastIndex(message => message.role === 'assistant')
  const asked = messages.slice(lastAssistant + 1).some(message => message.role === 'user' && /do you remember/i.test(message.content ?? ''))
  const result = messages.slice(lastAssistant + 1).findLast(message => message.role === 'tool')
  const usage = wireUsage(n)
  if (result !== undefined) {
    return sse({ choices: [{ delta: { role: 'assistant', content: `I remember it from the log: ${result.content ?? ''}` } }] }) + sse({ choices: [{ delta: {}, finish_reason: 'stop' }], usage })
  }
  if (asked) {
    const call = { index: 0, id: `call_${n}`, type: 'function', function: { name: TOOL_NAMES.historySearch, arguments: JSON.stringify({ query: 'brass key number stamped' }) } }
    return sse({ choices: [{ delta: { role: 'assistant', content: '', tool_calls: [call] } }] }) + sse({ choices: [{ delta: {}, finish_reason: 'tool_calls' }], usage })
  }
  return sse({ choices: [{ delta: { role: 'assistant', content: `Mira poles the ferry on through the grey water (reply ${n}).` } }] }) + sse({ choices: [{ delta: {}, finish_reason: 'stop' }], usage })
}

const received: Received[] = []
let server: Server
let baseURL: string
let home: string

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'tavern-live-'))
  vi.stubEnv('DSH_HOME', home)
  server = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk: Buffer) => { text += chunk.toString('utf8') })
    request.on('end', () => {
      const body = JSON.parse(text) as Received['body']
      const n = received.push({ headers: request.headers, body })
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.end(`${replyTo(body, n)}data: [DONE]\n\n`)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  vi.unstubAllEnvs()
  await new Promise(resolve => server.close(resolve))
  rmSync(home, { recursive: true, force: true })
})

describe('a live session against a loopback DeepSeek endpoint', () => {
  let report: LiveReport
  let sent: Received[]
  beforeAll(async () => {
    const before = received.length
    report = await runLive({ env: { DEEPSEEK_API_KEY: FAKE_KEY, DEEPSEEK_BASE_URL: baseURL }, turns: 6 })
    sent = received.slice(before)
  })

  it('sends every request through the adapter with the key, the model and the configured caps', () => {
    expect(report.session.errors).toEqual([])
    expect(sent.length).toBe(report.session.rows.length)
    for (const { headers, body } of sent) {
      expect(headers.authorization).toBe(`Bearer ${FAKE_KEY}`)
      expect(headers['x-deepseek-harness-session-id']).toBe('agent-tavern-live')
      expect(body).toMatchObject({ model: 'deepseek-v4-flash', stream: true, max_tokens: LIVE_DEFAULTS.maxTokens, thinking: { type: 'disabled' } })
      expect(body.tools?.map(tool => tool.function.name)).toContain(TOOL_NAMES.historySearch)
    }
  })

  it('measures it like the scripted demo: managed mode, every request rebuilt from the log, the probe answered through the tool', () => {
    const { session } = report
    expect(session.mode).toBe('agent-managed')
    expect(session.rows.map(row => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1', '3.1', '4.1', '5.1', '6.1', '6.2'])
    expect(session.rows.filter(row => row.diff !== undefined)).toEqual([])
    expect(session.rows.every(row => row.tokens > 0)).toBe(true)
    expect(session.probes).toEqual([expect.objectContaining({ turn: 6, plantTurn: 2, expect: '417', searched: true, found: true, answered: true })])
  })

  it('reports the provider usage of each request from the log, cache hits split out of the input', () => {
    expect(report.usage).toEqual(sent.map((_, i) => {
      const wire = wireUsage(i + 1)
      return { inputTokens: wire.prompt_tokens - wire.prompt_cache_hit_tokens, outputTokens: wire.completion_tokens, cacheReadTokens: wire.prompt_cache_hit_tokens }
    }))
  })
})

describe('npm run tavern with DEEPSEEK_API_KEY set', () => {
  it('runs the live session, prints its tables and the model used, and exits 0', async () => {
    const bin = fileURLToPath(new URL('../../examples/agent-tavern-demo/bin/demo.mjs', import.meta.url))
    const env = { PATH: process.env.PATH ?? '', DSH_HOME: home, DEEPSEEK_API_KEY: FAKE_KEY, DEEPSEEK_BASE_URL: baseURL }
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--turns', '4'], { encoding: 'utf8', env })
    expect(stdout).toContain('AgentTavern demo, live: an agent-managed session of 4 turns')
    expect(stdout).toContain(`Model: deepseek-v4-flash on route deepseek-official (@deepseek-ai/dsh-llm-deepseek@0.1.0-rc.8) at ${baseURL},`)
    expect(stdout).toMatch(/^request +turn +step +tokens \(meter\) +sent\/surface +reuse +provider input +cache hit +output +rebuilt from the log$/m)
    expect(stdout).toMatch(/^rebuilt from the log +5\/5$/m)
    expect(stdout).toMatch(/^4 +2 +"417" +yes\/yes\/yes\/(yes|no)$/m)
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('Model used: deepseek-official/deepseek-v4-flash')
    expect(stdout).not.toContain('Targets')
  })
})
