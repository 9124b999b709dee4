#!/usr/bin/env node
// Counts of a session log the npm `dsh` CLI persisted, as one JSON line: { events, turns (completed turn/end),
// failedTurns, toolCalls, toolResults, toolErrors, projections (request/projection), compactions, modes
// (agent-tavern/context-mode data.mode values), refusals ({ requested, code, missing } of refused modes) }.
// A plain session.jsonl is read line by line, whatever event types it holds (a stock rc.8 log keeps AgentTavern's
// mode event without the `ignorable` mark the patched session adds, so the seam's strict reader refuses it). A
// session.jsonl.zstd is read with the packed @dsh-seam/agent-context of the @dsh-seam/cli installed in the working
// directory (an app with the patched DSH set, whose session-persistence-jsonl decodes DSH's Zstandard frames).
// Usage: (cd <app> && node session-stats.mjs <session.jsonl[.zstd]>)
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: session-stats.mjs <session.jsonl[.zstd]>')
  process.exit(2)
}
let events
if (file.endsWith('.zstd')) {
  const cli = createRequire(join(process.cwd(), 'package.json')).resolve('@dsh-seam/cli')
  const reader = createRequire(cli).resolve('@dsh-seam/agent-context')
  const { readSessionLog } = await import(pathToFileURL(reader).href)
  events = (await readSessionLog(file)).events
} else {
  events = readFileSync(file, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line)).filter(record => typeof record.seq === 'number')
}
const ofType = type => events.filter(e => e.type === type)
const modes = ofType('agent-tavern/context-mode')
console.log(JSON.stringify({
  events: events.length,
  turns: ofType('turn/end').filter(e => e.data.reason.kind === 'completed').length,
  failedTurns: ofType('turn/end').filter(e => e.data.reason.kind !== 'completed').length,
  toolCalls: ofType('tool/call').length,
  toolResults: ofType('tool/result').length,
  toolErrors: ofType('tool/result').filter(e => e.data.error !== undefined).length,
  projections: ofType('request/projection').length,
  compactions: events.filter(e => e.type.startsWith('compaction/')).length,
  modes: modes.map(e => e.data.mode),
  refusals: modes.filter(e => e.data.refused !== undefined).map(e => ({ requested: e.data.refused.requested, code: e.data.refused.code, missing: e.data.refused.missing })),
}))
