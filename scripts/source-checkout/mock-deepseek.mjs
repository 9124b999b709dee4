#!/usr/bin/env node
// A loopback DeepSeek-compatible chat server for the managed-mode run of the real `dsh --profile headless` CLI.
// POST /v1/chat/completions refuses, with DeepSeek's 400 body, a request that breaks one of DeepSeek's documented
// request rules (deepseek-rules.mjs: reasoning_content kept on tool-call messages in thinking mode, tool calls paired
// with their results, a user message first). Otherwise it answers OpenAI-style SSE chunks ending in `data: [DONE]`,
// opening with a `reasoning_content` delta in thinking mode (on unless the request disables it, as DeepSeek's is):
//   - a request whose newest "Turn N: ..." user message has no answer after it (only user messages, e.g. runtime
//     context) answers one AgentTavern tool call (a rotation of memory_write, tavern_history_search,
//     tavern_history_read and memory_search, chosen by N);
//   - any other request with tools (a tool result is newest) answers the turn's narration (text);
//   - any other request (DSH's session-title request has no tools) answers a short title.
// Every request body is appended to --log as one JSON line { n, kind, turn, messages, roles, tools, chars, thinking,
// calls } (calls: assistant tool-call messages the request carries; kind 'refused' with the 400 message as `error`) so the run can show what each request carried. Prints `port <N>` on stdout once listening on 127.0.0.1.
// Usage: mock-deepseek.mjs --log <file.jsonl> [--port N]
import { appendFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { requestError, thinkingEnabled } from './deepseek-rules.mjs'

const { values } = parseArgs({ options: { log: { type: 'string' }, port: { type: 'string', default: '0' } } })
if (values.log === undefined) {
  console.error('usage: mock-deepseek.mjs --log <file.jsonl> [--port N]')
  process.exit(2)
}
const log = values.log

const PEOPLE = ['Orrin the tinker', 'Sela of the salt flats', 'the harbour warden', 'a boy with a lantern', 'Captain Ruen']
const THINGS = ['a brass compass', 'a sealed letter', 'a jar of river eels', 'a silver ring', 'a map of the shoals']

/** Text of a chat message's content (string or content parts). */
const textOf = content => typeof content === 'string' ? content : (content ?? []).map(part => part.text ?? '').join('')

/** The turn number our driver writes into every user message ("Turn N: ..."). */
const turnOf = text => Number(/^Turn (\d+):/.exec(text)?.[1] ?? 0)

/** The tool call the model makes in turn N: a rotation over AgentTavern's four tools. */
function toolCallFor(turn) {
  const person = PEOPLE[turn % PEOPLE.length]
  const thing = THINGS[turn % THINGS.length]
  switch (turn % 4) {
    case 1: return { name: 'memory_write', args: { text: `${person} boarded at turn ${turn} carrying ${thing}.`, tags: ['fact'], importance: 0.7 } }
    case 2: return { name: 'tavern_history_search', args: { query: THINGS[(turn + 3) % THINGS.length] } }
    case 3: return { name: 'tavern_history_read', args: { fromTurn: Math.max(1, turn - 6), toTurn: Math.max(1, turn - 5) } }
    default: return { name: 'memory_search', args: { query: PEOPLE[(turn + 1) % PEOPLE.length] } }
  }
}

/** The narration closing turn N, long enough that twenty turns overflow a small window. */
function narration(turn, toolText) {
  const person = PEOPLE[turn % PEOPLE.length]
  const thing = THINGS[turn % THINGS.length]
  return [
    `The ferry lurches as ${person} steps aboard in turn ${turn}, clutching ${thing}.`,
    'Mist curls over the grey water; the rope creaks against the iron ring of the landing, and gulls argue overhead.',
    `Mira Vell squints at the passenger and mutters that the tide waits for nobody, least of all for ${person}.`,
    `(The ledger answered ${toolText.length} characters.) She poles the boat out past the sandbar and the old beacon.`,
  ].join(' ')
}

function sse(res, deltas, usage, thinking) {
  if (thinking) deltas = [{ role: 'assistant', reasoning_content: 'The passenger list and the tide table decide this step.' }, ...deltas]
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const id = `chatcmpl-${Date.now()}`
  const chunk = (delta, finish) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'deepseek-v4-flash', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  let body = ''
  for (const [i, delta] of deltas.entries()) body += chunk(delta, i === deltas.length - 1 ? (delta.tool_calls ? 'tool_calls' : 'stop') : null)
  body += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'deepseek-v4-flash', choices: [], usage })}\n\n`
  body += 'data: [DONE]\n\n'
  res.end(body)
}

let n = 0
const server = createServer((req, res) => {
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }))
    return
  }
  let raw = ''
  req.on('data', data => { raw += data })
  req.on('end', () => {
    const body = JSON.parse(raw)
    const messages = body.messages ?? []
    const last = messages.at(-1) ?? {}
    const chars = raw.length
    // The newest "Turn N" user message opens the turn; runtime-context user messages may follow it.
    const opened = messages.findLastIndex(m => m.role === 'user' && turnOf(textOf(m.content)) > 0)
    const turn = opened < 0 ? 0 : turnOf(textOf(messages[opened].content))
    const usage = { prompt_tokens: Math.ceil(chars / 4), completion_tokens: 60, total_tokens: Math.ceil(chars / 4) + 60 }
    const thinking = thinkingEnabled(body)
    const error = requestError(body)
    let kind
    let respond
    if (error !== undefined) {
      kind = 'refused'
      respond = () => {
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: error, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } }))
      }
    } else if ((body.tools ?? []).length === 0) {
      kind = 'title'
      respond = () => sse(res, [{ role: 'assistant', content: 'The Grey Estuary crossing' }], usage, thinking)
    } else if (opened >= 0 && messages.slice(opened).every(m => m.role === 'user')) {
      kind = 'tool-call'
      const call = toolCallFor(turn)
      const id = `call_${turn}_${n}`
      respond = () => sse(res, [
        { role: 'assistant', content: '' },
        { tool_calls: [{ index: 0, id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] },
      ], usage, thinking)
    } else {
      kind = 'reply'
      respond = () => sse(res, [{ role: 'assistant', content: narration(turn, last.role === 'tool' ? textOf(last.content) : '') }], usage, thinking)
    }
    n += 1
    // Logged before the answer leaves, so a client that read the answer finds its request in the log.
    appendFileSync(log, `${JSON.stringify({ n, kind, turn, messages: messages.length, roles: messages.map(m => m.role[0]).join(''), tools: (body.tools ?? []).length, chars, thinking, calls: messages.filter(m => (m.tool_calls ?? []).length > 0).length, ...error === undefined ? {} : { error } })}\n`)
    respond()
  })
})
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`port ${server.address().port}`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
