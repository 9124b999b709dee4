#!/usr/bin/env node
// Counts of a persisted DSH session log (session.jsonl or session.jsonl.zstd), as one JSON line:
// { events, turns (completed turn/end), failedTurns, toolCalls (tool/call), toolResults, projections
// (request/projection), compactions (compaction/* events), modes (agent-tavern/context-mode data.mode values) }.
// The log is read with @dsh-seam/agent-context's reader (each Zstandard frame DSH writes, torn frames refused).
// Usage: session-stats.mjs <session.jsonl[.zstd]>
import { readSessionLog } from '../../packages/dsh-agent-context/lib/index.js'

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: session-stats.mjs <session.jsonl[.zstd]>')
  process.exit(2)
}
const { events } = await readSessionLog(file)
const ofType = type => events.filter(e => e.type === type)
console.log(JSON.stringify({
  events: events.length,
  turns: ofType('turn/end').filter(e => e.data.reason.kind === 'completed').length,
  failedTurns: ofType('turn/end').filter(e => e.data.reason.kind !== 'completed').length,
  toolCalls: ofType('tool/call').length,
  toolResults: ofType('tool/result').length,
  projections: ofType('request/projection').length,
  compactions: events.filter(e => e.type.startsWith('compaction/')).length,
  modes: ofType('agent-tavern/context-mode').map(e => e.data.mode),
}))
