import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The loopback DeepSeek-compatible server the CLI runs use refuses, with DeepSeek's 400 body, every request shape the
// real API refuses (scripts/source-checkout/deepseek-rules.mjs cites the rules), and answers the shapes it accepts.
const SERVER = fileURLToPath(new URL('../../scripts/source-checkout/mock-deepseek.mjs', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'mock-deepseek-'))
const log = join(work, 'requests.jsonl')
let server: ChildProcess
let url = ''

beforeAll(async () => {
  server = spawn(process.execPath, [SERVER, '--log', log], { stdio: ['ignore', 'pipe', 'inherit'] })
  url = await new Promise<string>((resolve, reject) => {
    server.stdout?.on('data', (data: Buffer) => {
      const port = /^port (\d+)/m.exec(data.toString())?.[1]
      if (port !== undefined) resolve(`http://127.0.0.1:${port}/v1/chat/completions`)
    })
    server.on('exit', code => reject(new Error(`mock-deepseek.mjs exited with ${code}`)))
  })
})
afterAll(() => {
  server.kill('SIGTERM')
  rmSync(work, { recursive: true, force: true })
})

const TOOLS = [{ type: 'function', function: { name: 'memory_search', description: 'search', parameters: { type: 'object', properties: {} } } }]
const system = { role: 'system', content: 'You are Mira Vell.' }
const user = (text: string) => ({ role: 'user', content: text })
const call = (id: string, reasoning?: string) => ({
  role: 'assistant', content: '', ...reasoning === undefined ? {} : { reasoning_content: reasoning },
  tool_calls: [{ id, type: 'function', function: { name: 'memory_search', arguments: '{}' } }],
})
const result = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'nothing found' })
const reply = { role: 'assistant', content: 'The ferry waits.' }

async function post(messages: object[], extra: object = {}): Promise<{ status: number, text: string }> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify({ model: 'deepseek-v4-flash', stream: true, messages, tools: TOOLS, ...extra }) })
  return { status: res.status, text: await res.text() }
}

describe('mock-deepseek.mjs: DeepSeek request rules', () => {
  it('answers a thinking-mode conversation whose tool-call message keeps its reasoning_content, and opens its answer with reasoning', async () => {
    const { status, text } = await post([system, user('Turn 1: Who is there?'), call('c1', 'Look it up.'), result('c1'), reply, user('Turn 2: And now?')])
    expect(status).toBe(200)
    expect(text).toContain('"reasoning_content"')
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
  })

  it('answers the same history without reasoning_content when thinking is disabled, and then streams no reasoning', async () => {
    const { status, text } = await post([system, user('Turn 1: Who is there?'), call('c1'), result('c1'), user('Turn 2: And now?')], { thinking: { type: 'disabled' } })
    expect(status).toBe(200)
    expect(text).not.toContain('reasoning_content')
  })

  const refused: [string, object[], RegExp][] = [
    ['thinking mode (the default): a tool-call message without reasoning_content in a later request',
      [system, user('Turn 1: Who?'), call('c1'), result('c1'), reply, user('Turn 2: Next?')], /Missing `reasoning_content` field in the assistant message at message index 2/],
    ['a tool call whose result is missing before the next user message',
      [system, user('Turn 1: Who?'), call('c1', 'r'), user('Turn 2: Next?')], /must be followed by tool messages responding to each 'tool_call_id'/],
    ['a tool call left unanswered at the end of the request',
      [system, user('Turn 1: Who?'), call('c1', 'r')], /must be followed by tool messages responding to each 'tool_call_id'/],
    ['a tool result that answers no preceding tool call (its call left out)',
      [system, user('Turn 1: Who?'), result('c1'), user('Turn 2: Next?')], /Messages with role 'tool' must be a response to a preceding message with 'tool_calls'/],
    ['a tool result naming another call than the one before it',
      [system, user('Turn 1: Who?'), call('c1', 'r'), result('c2')], /Messages with role 'tool' must be a response to a preceding message with 'tool_calls'/],
    ['a conversation that opens with an assistant message after the system message',
      [system, reply, user('Turn 2: Next?')], /The first message \(except the system message\) must be a user message, but an assistant message detected/],
    ['no messages at all', [], /Empty input messages/],
  ]
  for (const [shape, messages, message] of refused) {
    it(`refuses ${shape} with 400 invalid_request_error`, async () => {
      const { status, text } = await post(messages)
      expect(status).toBe(400)
      const body = JSON.parse(text) as { error: { message: string, type: string, code: string } }
      expect(body.error.type).toBe('invalid_request_error')
      expect(body.error.code).toBe('invalid_request_error')
      expect(body.error.message).toMatch(message)
    })
  }

  it('logs every request, the refused ones with their error', () => {
    const lines = readFileSync(log, 'utf8').trim().split('\n').map(line => JSON.parse(line) as { kind: string, error?: string })
    expect(lines.filter(line => line.kind === 'refused')).toHaveLength(refused.length)
    expect(lines.filter(line => line.kind === 'refused').every(line => typeof line.error === 'string')).toBe(true)
  })
})
