/**
 * `dsh-seam simulate` against the real loop: with a scripted model whose replies do not depend on what it is sent,
 * the requests simulate computes for keep-last-N on a session recorded without a listener are the requests a real
 * loop with that listener sends; AgentTavern's policy replayed on the managed session it recorded reproduces it; the
 * table and `--json` put both example policies beside the recorded selection; a listener that touches the live agent
 * is refused naming what it touched.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { isAgentLoopRequest } from '@deepseek-ai/dsh-llm'
import { readSessionLog } from '@dsh-seam/agent-context'
import { priceRequest, requestEnvelope } from '@dsh-seam/compaction-effective-projection'
import { keepLastTurns } from '@dsh-seam/context-policies'
import type { PolicyFigures, RecallProbe } from '@dsh-seam/cli'
import { EXIT, loadPolicy, meterPricer, simulate } from '@dsh-seam/cli'
import type { ScriptEntry } from '@dsh-seam/loop-testkit'
import { bootLoop, canonicalJson, patchedDsh, sessionLogPath, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { managedDemoSession, runCli } from './support.ts'

const KEEP_LAST_TURNS = fileURLToPath(import.meta.resolve('@dsh-seam/context-policies/keep-last-turns'))
const AGENT_TAVERN = fileURLToPath(import.meta.resolve('@dsh-seam/context-policies/agent-tavern'))
const root = mkdtempSync(join(tmpdir(), 'dsh-seam-simulate-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Replies that depend only on the request's index: every third request calls `echo`, the rest answer in text. */
const blindReply: ScriptEntry = (_request, index) => index % 3 === 1
  ? toolCallReply([{ id: `call-${index}`, name: 'echo', args: { text: `request ${index}` } }])
  : textReply(`Reply ${index}.`)

/** Run the same 18 user turns on a real patched loop, persisted, with or without a listener. */
async function played(listener: ((agent: Agent) => void) | undefined, dir: string) {
  const loop = await bootLoop(await patchedDsh(), { persistRoot: join(root, dir), fallback: blindReply })
  const agent = loop.create('blind')
  listener?.(agent)
  for (let turn = 1; turn <= 18; turn++) await loop.say(agent, `Turn ${turn}: go on.`)
  await loop.ctx.sessions.flush(agent.session)
  expect(loop.errors).toEqual([])
  return { path: sessionLogPath(loop, agent), sent: loop.adapter.requests.filter(request => isAgentLoopRequest(request)), meter: loop.ctx.tokenMeter }
}

describe('simulate computes the requests a real loop sends', () => {
  it('keep-last-N on a session recorded without a listener = a real run with that listener', async () => {
    const recorded = await played(undefined, 'native')
    const live = await played(agent => { agent.ctx.on('agent/context', keepLastTurns.createListener()) }, 'keep-last')
    const { header, events } = await readSessionLog(recorded.path)
    const { pricer, dispose } = await meterPricer()
    const simulation = await simulate(header, events, [await loadPolicy(KEEP_LAST_TURNS)], { pricer, keepRequests: true })
    await dispose()
    const simulated = simulation.requests[0]!
    expect(simulated.length).toBe(live.sent.length)
    expect(canonicalJson(simulated.map(request => request.messages))).toBe(canonicalJson(live.sent.map(request => request.messages)))
    expect(simulated.some((request, i) => request.messages.length < recorded.sent[i]!.messages.length)).toBe(true)
    const [baseline, policy] = simulation.figures as [PolicyFigures, PolicyFigures]
    const priced = (sent: typeof live.sent): number[] => sent.map(request => priceRequest(live.meter, { header: requestEnvelope(request.system, request.tools), messages: request.messages }))
    expect(simulated.map(request => request.tokens)).toEqual(priced(live.sent))
    expect(baseline.tokens.sum).toBe(priced(recorded.sent).reduce((a, b) => a + b, 0))
    expect(policy.tokens.peak).toBe(Math.max(...priced(live.sent)))
    expect(policy.tokens.sum).toBeLessThan(baseline.tokens.sum)
    expect(policy.projected).toBeGreaterThan(0)
    expect(baseline.projected).toBe(0)
  })
})

describe('simulate on the AgentTavern demo\'s managed session', () => {
  const TURNS = 40
  let path: string
  let probes: RecallProbe[]

  beforeAll(async () => {
    const session = await managedDemoSession(join(root, 'tavern'), TURNS)
    expect(session.errors).toEqual([])
    path = session.path
    const { script } = session
    probes = script.flatMap((turn, i) => turn.kind === 'probe' ? [{ turn: i + 1, refersTo: [turn.plantTurn], fact: turn.expect }] : [])
  })

  it('prints both example policies beside the recorded selection, and AgentTavern reproduces its own session', () => {
    const table = runCli('simulate', path, '--policy', KEEP_LAST_TURNS, '--policy', AGENT_TAVERN)
    expect(table.stderr).toBe('')
    expect(table.status).toBe(EXIT.ok)
    const names = table.stdout.split('\n').slice(2, 5).map(line => line.split(/\s+/)[0])
    expect(names).toEqual(['recorded', 'keep-last-3-turns', 'agent-tavern'])
    const json = runCli('simulate', path, '--policy', KEEP_LAST_TURNS, '--policy', AGENT_TAVERN, '--json')
    const { policies, probes: listed } = JSON.parse(json.stdout) as { policies: PolicyFigures[]; probes: RecallProbe[] }
    expect(listed).toEqual(probes)
    const [recorded, keepLast, tavern] = policies as [PolicyFigures, PolicyFigures, PolicyFigures]
    expect(recorded.projected).toBeGreaterThan(recorded.requests / 2)
    const { hostAdditions, name, ...same } = tavern
    expect({ name, hostAdditions: typeof hostAdditions }).toEqual({ name: 'agent-tavern', hostAdditions: 'number' })
    expect(same).toEqual((({ name: _, ...rest }) => rest)(recorded))
    expect(keepLast.inputSent).toEqual(probes.map(() => false))
    expect(keepLast.tokens.peak).toBeLessThan(recorded.tokens.peak)
  })
})

describe('a listener that touches the live agent', () => {
  let path: string
  beforeAll(async () => { path = (await played(undefined, 'touch')).path })

  it.each([
    ['reads agent.ctx', 'return async () => { agent.ctx.tools; return { include: [] } }', 'agent.ctx'],
    ['appends to the session, catching the refusal', 'return async ({ nodes }) => { try { agent.session.append("x", {}) } catch {} return { include: nodes.map(n => n.seq) } }', 'agent.session.append'],
    ['calls followUp when built', 'agent.followUp("more"); return () => ({ include: [] })', 'agent.followUp'],
    ['reads its tools when built, catching the refusal', 'try { agent.tools } catch {} return () => ({ include: [] })', 'agent.tools'],
  ])('is refused when it %s, naming what it touched', (_, body, touched) => {
    const module = join(root, `touch-${touched}.mjs`)
    writeFileSync(module, `export const name = 'toucher'\nexport function createListener({ agent }) { ${body} }\n`)
    const run = runCli('simulate', path, '--policy', module)
    expect(run.status).toBe(EXIT.unreadable)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(new RegExp(`^dsh-seam simulate: policy toucher: its (createListener|listener at turn \\d+ step \\d+ \\(seq \\d+\\)) touched ${touched.replace('.', '\\.')}: a listener that calls the agent or its tools cannot be replayed from a log \\[live-agent\\]\\n$`))
  })

  it.each([
    ['exports no listener factory', 'export const name = "empty"', 'invalid-policy', 'exports no createListener function'],
    ['names seqs that are not nodes', 'export function createListener() { return () => ({ include: [1e9] }) }', 'invalid-selection', 'unknown-seq'],
    ['returns no selection', 'export function createListener() { return () => ({ include: "3,5" }) }', 'invalid-selection', 'returned { include: \'3,5\' }, not { include: number[], revision?: string, reasons?: { [seq]: string } }'],
    ['returns an unreadable selection', 'export function createListener() { return () => ({ get include() { throw new Error("getter") } }) }', 'invalid-selection', 'cannot be read: Error: getter'],
    ['throws', 'export function createListener() { return () => { throw new Error("no budget") } }', 'listener-failed', 'no budget'],
  ])('a policy module that %s exits 2 with one line', (_, source, code, said) => {
    const module = join(root, `bad-${code}.mjs`)
    writeFileSync(module, source)
    const run = runCli('simulate', path, '--policy', module, '--json')
    expect(run.status).toBe(EXIT.unreadable)
    expect(run.stderr.split('\n')).toHaveLength(2)
    expect(run.stderr).toContain(said)
    expect(run.stderr).toMatch(new RegExp(`\\[${code}\\]\\n$`))
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code } })
  })
})
