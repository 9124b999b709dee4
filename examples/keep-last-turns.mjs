// A real DSH 0.1.0-rc.8 AgentLoop (patched) on an offline scripted model, with a plugin-author listener that keeps
// the last N turns. Prints, per request: surface nodes, included nodes, message tokens estimated by DSH's token
// meter (sent vs. whole surface), and whether the request rebuilds from the session log alone.
// Run: npm run demo [-- --turns 12 --keep 2]
import { parseArgs } from 'node:util'
import { diffRequest, replayRequests } from '@dsh-seam/agent-context'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'

const { values } = parseArgs({ options: { turns: { type: 'string', default: '12' }, keep: { type: 'string', default: '2' } } })
const turns = Number(values.turns)
const keep = Number(values.keep)
if (!Number.isSafeInteger(turns) || turns < 1 || !Number.isSafeInteger(keep) || keep < 1) {
  throw new Error(`--turns and --keep must be positive integers, got ${values.turns} and ${values.keep}`)
}

const dsh = await patchedDsh()
// Every third turn the model calls the echo tool once before answering.
const loop = await bootLoop(dsh, {
  fallback: (request, index) => {
    const last = request.messages.at(-1)
    const asked = last.content.find(block => block.type === 'text')?.text ?? ''
    if (last.content.some(block => block.type === 'tool-result')) return textReply(`The tool answered; noted for request ${index + 1}.`)
    if (/turn (\d+)/.exec(asked)?.[1] % 3 === 0) return toolCallReply([{ id: `call-${index}`, name: 'echo', args: { text: asked } }])
    return textReply(`Reply to "${asked}": ${'some prose the model wrote. '.repeat(6)}`)
  },
})
const agent = loop.create('keep-last-turns')

// The plugin author's whole job: choose seqs. Everything else (validation, tool units, logging) is the host's.
agent.ctx.on('agent/context', async ({ turn, nodes }, next) => {
  const all = await next()
  const firstKept = agent.session.events.find(e => e.type === 'turn/start' && e.data.turn === turn - keep + 1)?.seq ?? 0
  return { include: all.include.filter(seq => seq > firstKept), revision: `keep-last-${keep}-turns` }
})

for (let t = 1; t <= turns; t++) await loop.say(agent, `This is turn ${t}. ${'Context the user typed. '.repeat(4)}`)

const meter = loop.ctx.tokenMeter
const tokens = messages => messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
const replayed = replayRequests(agent.session.events)
const rows = replayed.map((request, i) => {
  const sent = loop.adapter.requests[i]
  const verdict = diffRequest(request, sent)
  return {
    '#': i + 1,
    turn: request.turn,
    step: request.step,
    'surface nodes': request.surfaceNodes,
    'included nodes': request.messages.length,
    'sent msg tokens': tokens(request.messages),
    'surface msg tokens': tokens(surfaceMessagesAt(agent.session.events, request.seq)),
    revision: request.projection?.revision ?? '(default)',
    'rebuilt from log': verdict === undefined ? 'yes' : `NO: ${verdict}`,
  }
})
console.table(rows)
const failures = rows.filter(row => row['rebuilt from log'] !== 'yes').length + loop.errors.length
console.log(`${rows.length} requests, ${replayed.filter(r => r.projection).length} projected, ${failures === 0 ? 'every request rebuilt from the log' : `${failures} FAILED`}; `
  + `peak sent ${Math.max(...rows.map(r => r['sent msg tokens']))} vs. peak surface ${Math.max(...rows.map(r => r['surface msg tokens']))} message tokens (DSH token meter).`)
process.exit(failures === 0 ? 0 : 1)

/** The whole-surface messages before a request's first chunk: DSH's own derivation of the log prefix. */
function surfaceMessagesAt(events, seq) {
  return dsh.session.Session.create(dsh.session.SessionId('surface-at'), structuredClone(events.slice(0, seq))).deriveMessages()
}
