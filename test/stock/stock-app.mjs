// An app on stock DSH rc.8 (run with --import ./stock-resolve.mjs): every public package imports; detection answers
// false; the guard throws; AgentTavern refuses activating agent-managed closed and runs dsh-native; a compressed log reads.
// Prints one JSON line of what it saw.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const seen = { imported: [] }
const packages = [
  '@dsh-seam/agent-context',
  '@dsh-seam/agent-loop-patch',
  '@dsh-seam/agent-tavern',
  '@dsh-seam/compaction-effective-projection',
  '@dsh-seam/cli',
]
for (const name of packages) {
  await import(name)
  seen.imported.push(name)
}
const { readSessionLog } = await import('@dsh-seam/agent-context')
const { assertAgentContextSeam, hasAgentContextSeam } = await import('@dsh-seam/agent-loop-patch')
const { AgentTavern, contextModeOf } = await import('@dsh-seam/agent-tavern')
const { bootLoop, sessionLogPath, stockDsh, textReply } = await import('@dsh-seam/loop-testkit')
const session = await import('@deepseek-ai/dsh-session')
seen.stockSession = !session.KNOWN_SESSION_EVENT_TYPES.has('request/projection')

const dsh = await stockDsh()
const persistRoot = mkdtempSync(join(tmpdir(), 'stock-app-sessions-'))
const loop = await bootLoop(dsh, { plugins: [[dsh.compactionBasic.default]], fallback: textReply('Aye.'), persistRoot })
seen.hasSeam = hasAgentContextSeam(loop.ctx)
try {
  assertAgentContextSeam(loop.ctx, 'my-policy')
  seen.guard = 'passed'
} catch (error) {
  seen.guard = { name: error.name, missing: error.missing, message: error.message }
}
const agent = loop.create('stock-app')
const character = { name: 'Mira', identity: 'The ferrywoman.' }
try {
  await agent.ctx.plugin(AgentTavern, { character, contextMode: 'agent-managed' })
} catch (error) {
  seen.refusal = { code: error.code, reason: error.reason, missing: error.missing }
}
await agent.ctx.plugin(AgentTavern, { character, contextMode: 'dsh-native' })
seen.mode = contextModeOf(agent)
for (const text of ['one', 'two', 'three']) await loop.say(agent, text)
seen.turns = agent.session.events.filter(event => event.type === 'turn/end').length
seen.requests = loop.adapter.requests.length
seen.errors = loop.errors.map(entry => String(entry.error))

// The stock log holds only types stock DSH knows, and the CLI verifies it on the stock set.
await loop.ctx.sessions.flush(agent.session)
seen.unknownTypes = agent.session.events.filter(event => !session.KNOWN_SESSION_EVENT_TYPES.has(event.type)).map(event => event.type)
const { main } = await import('@dsh-seam/cli')
const file = readdirSync(persistRoot, { recursive: true }).map(String).find(name => name.endsWith('session.jsonl'))
let out = ''
const exit = await main(['verify', join(persistRoot, file)], { stdout: { write: text => { out += text } }, stderr: { write: text => { out += text } } })
seen.verify = { exit, out: out.trim().replace(persistRoot, '<root>') }

// A log stock DSH's own JSONL backend writes Zstandard-compressed reads to the events its session holds.
const zstdLoop = await bootLoop(dsh, { fallback: textReply('Aye.'), persistRoot: mkdtempSync(join(tmpdir(), 'stock-app-zstd-')), compression: 'zstd' })
const zstdAgent = zstdLoop.create('stock-app-zstd')
for (const text of ['one', 'two', 'three']) await zstdLoop.say(zstdAgent, text)
await zstdLoop.ctx.sessions.flush(zstdAgent.session)
const compressed = sessionLogPath(zstdLoop, zstdAgent)
const fromCompressed = await readSessionLog(compressed)
seen.compressedLog = {
  zstd: readFileSync(compressed).readUInt32LE(0) === 0xFD2FB528,
  events: fromCompressed.events.length,
  same: JSON.stringify(fromCompressed.events) === JSON.stringify(zstdAgent.session.events),
}

console.log(JSON.stringify(seen))
