#!/usr/bin/env node
// AgentTavern demo: the same long roleplay in dsh-native and agent-managed mode on a real DSH 0.1.0-rc.8 AgentLoop
// (patched build, DSH's invariants on, projection-aware compaction) driven by an embedded deterministic model.
// Prints per-request tokens, peaks, means, prefix reuse, compactions, recall probes, replay verdicts and the targets;
// writes out/tavern-tokens.svg and out/tavern-requests.csv. Offline; exits 1 when a target fails.
// Run from the repository root: npm run tavern [-- --turns 300 --context-window 90000 --every 25 (0: every request)]
import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { probeTable, reportChart, requestsCsv, requestTable, runDemo, sessionTable } from '../lib/demo/index.js'

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '300' },
    'context-window': { type: 'string', default: '90000' },
    every: { type: 'string', default: '25' },
    seed: { type: 'string', default: '7' },
  },
})
const number = (name, min) => {
  const value = Number(values[name])
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}, got ${values[name]}`)
  return value
}
const turns = number('turns', 20)
const contextWindow = number('context-window', 1000)
const every = number('every', 0)
const seed = number('seed', 0)

console.log(`AgentTavern demo: a ${turns}-turn roleplay, the same script in both context modes.`)
console.log(`Host: DSH 0.1.0-rc.8 AgentLoop (patched with the agent/context seam), DSH's runtime invariants on, scripted offline model`)
console.log(`on route fake/fake-model with a ${contextWindow.toLocaleString('en-US')}-token context window, compaction by`)
console.log(`@dsh-context/compaction-effective-projection (measure: projection; stock basic behaviour without a listener).`)
console.log('Tokens: the DSH token meter (estimateMessage per message; system prompt and tools at its 4 chars/token).\n')

const report = await runDemo({
  turns,
  contextWindow,
  seed,
  progress: (mode, turn) => { if (process.stderr.isTTY && turn % 10 === 0) process.stderr.write(`\r${mode}: turn ${turn}/${turns}   `) },
})
if (process.stderr.isTTY) process.stderr.write('\r                                        \r')
for (const session of [report.native, report.managed]) {
  if (session.unavailable !== undefined) console.log(`${session.mode} could not run: ${session.unavailable}\n`)
}

const out = fileURLToPath(new URL('../../../out/', import.meta.url))
mkdirSync(out, { recursive: true })
writeFileSync(`${out}tavern-tokens.svg`, reportChart(report, turns))
writeFileSync(`${out}tavern-requests.csv`, requestsCsv(report))

console.log(every === 0 ? 'Requests' : `Requests (the first of every ${every}th turn, and each mode's peak; all of them in out/tavern-requests.csv)`)
console.log(requestTable(report, every).join('\n'))
console.log('\nSessions')
console.log(sessionTable(report).join('\n'))
console.log('\nRecall probes (judged from the log: the tool was called, its logged result holds the fact, the reply states it;')
console.log('"in request" = the request that called the tool already carried the fact outside tool results)')
console.log(probeTable(report).join('\n'))
console.log('\nTargets')
for (const target of report.targets) console.log(`${target.pass ? 'PASS' : 'FAIL'}  ${target.name}: ${target.value}`)
console.log('\nChart: out/tavern-tokens.svg')
process.exit(report.targets.every(target => target.pass) ? 0 : 1)
