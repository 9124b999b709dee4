#!/usr/bin/env node
// AgentTavern demo: the same long roleplay in dsh-native and agent-managed mode on a real DSH 0.1.0-rc.8 AgentLoop
// (patched build, DSH's invariants on, projection-aware compaction) driven by an embedded deterministic model.
// Prints per-request tokens, peaks, means, prefix reuse, compactions, recall probes, replay verdicts and the targets;
// writes out/tavern-tokens.svg and out/tavern-requests.csv. Offline; exits 1 when a target fails.
// With DEEPSEEK_API_KEY set (and no --scripted), it instead runs a short agent-managed session on the real DeepSeek
// provider (@deepseek-ai/dsh-llm-deepseek, route deepseek-official; DEEPSEEK_BASE_URL optional) and prints the same
// figures plus the provider's usage; no targets, exits 1 only when the session reported an agent error.
// Run from the repository root: npm run tavern [-- --lang zh --turns 300 --context-window 90000 --every 25 (0: every request)
// --persist <dir> (each session's JSONL log under <dir>, for dsh-seam report and simulate)]
// Live options: --model deepseek-v4-flash --turns 8 --context-window 20000; --scripted forces the offline model.
import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import {
  DEMO_CONTEXT_WINDOW, demoModel, LIVE_DEFAULTS, LIVE_KEY_ENV, liveProbeTable, liveRequestTable, liveSessionTable, probeTable, reportChart, requestsCsv,
  requestTable, runDemo, runLive, sessionTable,
} from '../lib/index.js'

const { values } = parseArgs({
  options: {
    turns: { type: 'string' },
    'context-window': { type: 'string' },
    every: { type: 'string', default: '25' },
    seed: { type: 'string', default: '7' },
    lang: { type: 'string', default: 'en' },
    model: { type: 'string' },
    scripted: { type: 'boolean', default: false },
    persist: { type: 'string' },
  },
})
const choice = demoModel(process.env, { scripted: values.scripted, ...values.model === undefined ? {} : { model: values.model } })
const live = choice.kind === 'live'
const number = (name, min, fallback) => {
  const value = Number(values[name] ?? fallback)
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}, got ${values[name]}`)
  return value
}
const turns = live ? number('turns', 4, LIVE_DEFAULTS.turns) : number('turns', 20, 300)
const contextWindow = number('context-window', 1000, live ? LIVE_DEFAULTS.contextWindow : DEMO_CONTEXT_WINDOW)
const every = number('every', 0)
const seed = number('seed', 0)
const tokens = (value) => value.toLocaleString('en-US')
const lang = values.lang
if (lang !== 'en' && lang !== 'zh') throw new Error(`--lang must be en or zh, got ${lang}`)

if (live) {
  console.log(`AgentTavern demo, live: an agent-managed session of ${turns} turns (a fact planted on turn 2, its recall probe on turn ${turns})`)
  console.log(`on the real DeepSeek provider, because ${LIVE_KEY_ENV} is set (--scripted runs the offline demo instead). A smoke run: no targets.`)
  const report = await runLive({
    env: process.env,
    model: choice.model,
    turns,
    contextWindow,
    seed,
    lang,
    progress: turn => { if (process.stderr.isTTY) process.stderr.write(`\rlive: turn ${turn}/${turns}   `) },
  })
  if (process.stderr.isTTY) process.stderr.write('\r                                        \r')
  const { route } = report
  console.log(`Model: ${route.model} on route ${route.provider} (@deepseek-ai/dsh-llm-deepseek@0.1.0-rc.8) at ${route.baseURL},`)
  console.log(`reasoning effort ${route.reasoningEffort}, at most ${tokens(route.maxTokens)} output tokens per request, a ${tokens(route.contextWindow)}-token context window`)
  console.log('declared for the model in the adapter catalog (the managed policy\'s budgets are shares of it).')
  console.log('Host: DSH 0.1.0-rc.8 AgentLoop (patched with the agent/context seam), DSH\'s runtime invariants on, compaction by')
  console.log('@dsh-seam/compaction-effective-projection (measure: projection).')
  console.log('Tokens: the DSH token meter; provider input/cache hit/output: the usage DeepSeek reported, from the log.\n')
  console.log('Requests')
  console.log(liveRequestTable(report).join('\n'))
  console.log('\nSession')
  console.log(liveSessionTable(report).join('\n'))
  console.log('\nRecall probe (judged from the log: searched = tavern_history_search called, found = its result holds the fact,')
  console.log('answered = the final reply states it, in request = the asking request already carried the fact outside tool results)')
  console.log(liveProbeTable(report).join('\n'))
  console.log(`\nModel used: ${route.provider}/${route.model}`)
  process.exit(report.session.errors.length === 0 && report.session.rows.length > 0 ? 0 : 1)
}

console.log(`AgentTavern demo: a ${turns}-turn ${lang === 'zh' ? 'Chinese' : 'English'} roleplay, the same script in both context modes.`)
console.log(`Host: DSH 0.1.0-rc.8 AgentLoop (patched with the agent/context seam), DSH's runtime invariants on, scripted offline model`)
console.log(`on route fake/fake-model with a ${contextWindow.toLocaleString('en-US')}-token context window, compaction by`)
console.log(`@dsh-seam/compaction-effective-projection (measure: projection; stock basic behaviour without a listener).`)
console.log('Tokens: the DSH token meter (priceRequest: estimateHeader + estimateMessage, 4 chars/token in every script); the scripted')
console.log('provider reports usage from a stand-in tokenizer (0.75 token per CJK character), and the managed budget is calibrated by it.\n')

const report = await runDemo({
  turns,
  contextWindow,
  seed,
  lang,
  progress: (mode, turn) => { if (process.stderr.isTTY && turn % 10 === 0) process.stderr.write(`\r${mode}: turn ${turn}/${turns}   `) },
  ...values.persist === undefined ? {} : { persistRoot: values.persist },
})
if (process.stderr.isTTY) process.stderr.write('\r                                        \r')
for (const session of [report.native, report.managed]) {
  if (session.unavailable !== undefined) console.log(`${session.mode} could not run: ${session.unavailable}\n`)
}

const out = fileURLToPath(new URL('../../../out/', import.meta.url))
mkdirSync(out, { recursive: true })
const suffix = lang === 'en' ? '' : `-${lang}`
writeFileSync(`${out}tavern-tokens${suffix}.svg`, reportChart(report, turns))
writeFileSync(`${out}tavern-requests${suffix}.csv`, requestsCsv(report))

console.log(every === 0 ? 'Requests' : `Requests (the first of every ${every}th turn, and each mode's peak; all of them in out/tavern-requests${suffix}.csv)`)
console.log(requestTable(report, every).join('\n'))
console.log('\nSessions')
console.log(sessionTable(report).join('\n'))
console.log('\nRecall probes (judged from the log: the tool was called, its logged result holds the fact, the reply states it;')
console.log('"in request" = the request that called the tool already carried the fact outside tool results)')
console.log(probeTable(report).join('\n'))
console.log('\nTargets')
for (const target of report.targets) console.log(`${target.pass ? 'PASS' : 'FAIL'}  ${target.name}: ${target.value}`)
console.log(`\nChart (estimated and provider-reported tokens per request): out/tavern-tokens${suffix}.svg`)
for (const session of [report.native, report.managed]) if (session.log !== undefined) console.log(`${session.mode} session log: ${session.log}`)
process.exit(report.targets.every(target => target.pass) ? 0 : 1)
