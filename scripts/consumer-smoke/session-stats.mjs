#!/usr/bin/env node
// Counts of a persisted DSH session log, as one JSON line: { events, turns (completed turn/end), failedTurns,
// toolCalls, toolResults, toolErrors, projections (request/projection), compactions, tavernEvents (events of an
// agent-tavern/* type: AgentTavern records its mode in the session binding and writes none) }.
// A plain session.jsonl is read line by line, whatever event types it holds. A session.jsonl.zstd is read with
// @dsh-seam/agent-context's readSessionLog (it decodes DSH's Zstandard frames with node:zlib): the module `--reader`
// names, else the one of the @dsh-seam/cli installed in the working directory.
// Usage: session-stats.mjs [--reader <agent-context module>] <session.jsonl[.zstd]>
//   (consumer-smoke/cli.sh runs it in its app; source-checkout/cli-runs.sh passes the workspace's built reader)
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const args = process.argv.slice(2)
const reader = args[0] === '--reader' ? args.splice(0, 2)[1] : undefined
const file = args[0]
if (file === undefined) {
  console.error('usage: session-stats.mjs [--reader <agent-context module>] <session.jsonl[.zstd]>')
  process.exit(2)
}
let events
if (file.endsWith('.zstd')) {
  const cli = () => createRequire(join(process.cwd(), 'package.json')).resolve('@dsh-seam/cli')
  const module = reader === undefined ? createRequire(cli()).resolve('@dsh-seam/agent-context') : resolve(reader)
  const { readSessionLog } = await import(pathToFileURL(module).href)
  events = (await readSessionLog(file)).events
} else {
  events = readFileSync(file, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line)).filter(record => typeof record.seq === 'number')
}
const ofType = type => events.filter(e => e.type === type)
console.log(JSON.stringify({
  events: events.length,
  turns: ofType('turn/end').filter(e => e.data.reason.kind === 'completed').length,
  failedTurns: ofType('turn/end').filter(e => e.data.reason.kind !== 'completed').length,
  toolCalls: ofType('tool/call').length,
  toolResults: ofType('tool/result').length,
  toolErrors: ofType('tool/result').filter(e => e.data.error !== undefined).length,
  projections: ofType('request/projection').length,
  compactions: events.filter(e => e.type.startsWith('compaction/')).length,
  tavernEvents: events.filter(e => e.type.startsWith('agent-tavern/')).length,
}))
