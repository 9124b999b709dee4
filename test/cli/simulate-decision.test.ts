/**
 * `simulate` as a decision tool, on logs a real patched loop persisted: a policy's reasons for what it left out are
 * counted and printed (and never recorded in the log); a fact probe passes when any request of its turn sent the fact's
 * text, wherever it was (a user line, a reply, a tool call or result); each policy's tokens are set against the
 * recorded run; requests over the recorded context window are counted; `--report` writes the page with every policy.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readSessionLog } from '@dsh-seam/agent-context'
import type { PolicyFigures, RequestSummary } from '@dsh-seam/cli'
import { EXIT, loadPolicy, meterPricer, simulate } from '@dsh-seam/cli'
import { bootLoop, conversationReply, conversationTurn, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-decision-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const WINDOW = 400
let path: string

beforeAll(async () => {
  const loop = await bootLoop(await patchedDsh(), { persistRoot: join(root, 'sessions'), fallback: conversationReply(), contextWindow: WINDOW })
  const agent = loop.create('decision')
  await loop.say(agent, 'The code word is Quokka.')
  for (let turn = 2; turn <= 9; turn++) await loop.say(agent, conversationTurn(turn))
  await loop.ctx.sessions.flush(agent.session)
  expect(loop.errors).toEqual([])
  path = sessionLogPath(loop, agent)
})

/** Keeps the last 3 nodes and says why it left each other node out; its probes ask for the code word and the echo of turn 3. */
function reasoner(): string {
  const module = join(root, 'reasoner.mjs')
  writeFileSync(module, `export const name = 'last-3-nodes'
export function createListener() {
  return ({ nodes }) => ({
    include: nodes.slice(-3).map(node => node.seq),
    revision: 'last-3-nodes',
    reasons: Object.fromEntries(nodes.slice(0, -3).map(node => [node.seq, node.message.role === 'user' ? 'an older user line' : 'an older reply or result'])),
  })
}
export function probes(turns) { return [{ turn: turns, refersTo: [1], fact: 'QUOKKA' }, { turn: 4, refersTo: [3], fact: 'echo' }] }
`)
  return module
}

describe('simulate as a decision tool', () => {
  it('counts and prints the reasons a policy gave for the nodes it left out, and only for those', async () => {
    const { header, events } = await readSessionLog(path)
    const { pricer, dispose } = await meterPricer()
    const simulation = await simulate(header, events, [await loadPolicy(reasoner())], { pricer, keepRequests: true })
    await dispose()
    const requests = simulation.requests[0]!
    for (const request of requests) for (const seq of request.reasons.keys()) expect(request.include).not.toContain(seq)
    const given = new Map<string, number>()
    for (const request of requests) for (const reason of request.reasons.values()) given.set(reason, (given.get(reason) ?? 0) + 1)
    expect(given.size).toBe(2)
    const figures = simulation.figures[1]!
    expect(figures.reasons).toEqual([...given].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)))
    const run = runCli('simulate', path, '--policy', reasoner())
    expect(run.status).toBe(EXIT.ok)
    const block = run.stdout.slice(run.stdout.indexOf('why last-3-nodes left nodes out'))
    for (const { reason, count } of figures.reasons) expect(block).toMatch(new RegExp(`^ *${count} +${reason}$`, 'm'))
    expect(readFileSync(path, 'utf8')).not.toContain('an older user line')
  })

  it('judges fact probes against everything sent, sets each policy against the recorded run, and counts window overflows', () => {
    const json = runCli('simulate', path, '--policy', reasoner(), '--json')
    expect(json).toMatchObject({ status: EXIT.ok, stderr: '' })
    const { policies, contextWindow } = JSON.parse(json.stdout) as { policies: PolicyFigures[]; contextWindow: number }
    const [recorded, policy] = policies as [PolicyFigures, PolicyFigures]
    expect(contextWindow).toBe(WINDOW)
    expect(recorded.factSent).toEqual([true, true])
    expect(policy.factSent).toEqual([false, true])
    expect(recorded.inputSent).toEqual([true, true])
    expect(policy.inputSent[0]).toBe(false)
    const inspected = (JSON.parse(runCli('inspect', path, '--json').stdout) as { requests: RequestSummary[] }).requests
    expect(recorded.overflows).toBe(inspected.filter(request => request.tokens > WINDOW).length)
    expect(recorded.overflows).toBeGreaterThan(0)
    expect(policy.overflows).toBeLessThan(recorded.overflows!)
    const table = runCli('simulate', path, '--policy', reasoner()).stdout.split('\n')
    expect(table[0]).toContain(`context window ${WINDOW} as recorded`)
    expect(table[1]).toMatch(/^policy +projected +tokens sum +vs recorded +peak +p95 +over window +prefix reuse +host additions +input sent +facts sent$/)
    const change = policy.tokens.sum - recorded.tokens.sum
    expect(table[3]).toContain(`−${Math.abs(change).toLocaleString('en-US')} (−${(Math.abs(change) / recorded.tokens.sum * 100).toFixed(1)}%)`)
    expect(table[3]).toMatch(/ 1\/2$/)
  })

  it('--report writes the recorded map with each policy beside it, and refuses the log as the page', () => {
    const page = join(root, 'policies.html')
    const run = runCli('simulate', path, '--policy', reasoner(), '--report', page)
    expect(run.status).toBe(EXIT.ok)
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(`wrote ${page}: the recorded map and each policy's, one selection switch`)
    const data = JSON.parse(/<script type="application\/json" id="report-data">(.*)<\/script>/.exec(readFileSync(page, 'utf8'))![1]!) as { requests: RequestSummary[]; variants: { name: string; requests: (RequestSummary & { reasons?: [number, string][] })[] }[] }
    expect(data.variants.map(variant => variant.name)).toEqual(['last-3-nodes'])
    expect(data.variants[0]!.requests.map(request => request.revision)).toEqual(data.requests.map(() => 'last-3-nodes'))
    expect(data.variants[0]!.requests.some(request => (request.reasons?.length ?? 0) > 0)).toBe(true)
    expect(runCli('simulate', path, '--policy', reasoner(), '--report', path)).toMatchObject({ status: EXIT.unreadable, stderr: `dsh-seam simulate: --report ${path} is the session log being read: name another file for the page\n` })
  })
})
