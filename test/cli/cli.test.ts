/**
 * `dsh-seam inspect` and `verify`, run as a child process on session logs persisted by a real patched loop, and on
 * copies of them broken one host invariant at a time.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage } from '@deepseek-ai/dsh-session'
import { projectionEvents, readSessionLog } from '@dsh-seam/agent-context'
import type { LogViolation, RequestSummary } from '@dsh-seam/cli'
import { EXIT } from '@dsh-seam/cli'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rewriteEvent, runCli, selected, surfaceBefore } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'seam-cli-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let loop: BootedLoop
let projected: { agent: Agent; path: string; events: SessionEvent[] }
let native: { agent: Agent; path: string }

async function converse(agent: Agent, turns: number): Promise<string> {
  for (let turn = 1; turn <= turns; turn++) await loop.say(agent, conversationTurn(turn))
  await loop.ctx.sessions.flush(agent.session)
  return sessionLogPath(loop, agent)
}

beforeAll(async () => {
  loop = await bootLoop(await patchedDsh(), { persistRoot: root, fallback: conversationReply() })
  const agent = loop.create('projected')
  agent.ctx.on('agent/context', keepLastNodes(3))
  const path = await converse(agent, 7)
  projected = { agent, path, events: (await readSessionLog(path)).events }
  const plain = loop.create('native')
  native = { agent: plain, path: await converse(plain, 3) }
  expect(loop.errors).toEqual([])
})

function sentBy(agent: Agent): GenerateOptions[] {
  return loop.adapter.requests.filter(request => request.sessionId === agent.id)
}

type ProjectionEvent = SessionEvent<'request/projection'>

/** A copy of the projected log with one `request/projection` rewritten; counts follow the new ranges unless given. */
function withProjection(name: string, event: ProjectionEvent, change: (data: RequestProjection, surface: number[]) => Partial<RequestProjection>): { path: string; line: number } {
  const path = join(root, `${name}.jsonl`)
  const line = rewriteEvent(projected.path, path, event.seq, record => {
    const surface = surfaceBefore(projected.events, event.seq)
    const changed = change(event.data, surface)
    const include = changed.include ?? event.data.include
    return { ...record, data: { ...event.data, includedNodes: selected(surface, include).length, ...changed } }
  })
  return { path, line }
}

/** A projection of the first step of a turn after the first, whose request sends earlier nodes. */
function laterProjection(): ProjectionEvent {
  return projectionEvents(projected.events).find(event => event.data.turn > 2 && event.data.step === 1) as ProjectionEvent
}

/** Run `verify` and `verify --json` on a broken log and return the one violation both report. */
/** The policy warnings `verify` prints for a log whose requests all rebuild: exit 3, one line each, and as JSON. */
function warningsOf(path: string): { code: string; detail: string; seq: number; line: number; turn: number; step: number; revision?: string }[] {
  const run = runCli('verify', path)
  expect(run.status).toBe(EXIT.policy)
  expect(run.stdout).toMatch(/^verified .*; \d+ do not meet today's host policy \(warnings above\)\n$/)
  const json = runCli('verify', path, '--json')
  expect(json.status).toBe(EXIT.policy)
  const report = JSON.parse(json.stdout) as { ok: boolean; warnings: ReturnType<typeof warningsOf> }
  expect(report.ok).toBe(true)
  expect(run.stderr.split('\n')).toHaveLength(report.warnings.length + 1)
  report.warnings.forEach((warning, i) => {
    const revision = warning.revision === undefined ? 'no revision' : `revision "${warning.revision}"`
    expect(run.stderr.split('\n')[i]).toBe(`verify: warning: ${path}:${warning.line}: seq ${warning.seq}, turn ${warning.turn} step ${warning.step}, ${revision}: [${warning.code}] request/projection ${warning.detail}; today's host would not write this projection (the log was written under an earlier rule)`)
  })
  return report.warnings
}

function violationOf(path: string): LogViolation & { line: number } {
  const run = runCli('verify', path)
  expect(run.status).toBe(EXIT.violation)
  expect(run.stdout).toBe('')
  expect(run.stderr.split('\n')).toHaveLength(2)
  const json = runCli('verify', path, '--json')
  expect(json.status).toBe(EXIT.violation)
  const report = JSON.parse(json.stdout) as { ok: boolean; violation: LogViolation & { line: number } }
  expect(report.ok).toBe(false)
  const { violation } = report
  const revision = violation.revision === undefined ? 'no revision' : `revision "${violation.revision}"`
  expect(run.stderr).toBe(`dsh-seam verify: ${path} line ${violation.line} (seq ${violation.seq}, turn ${violation.turn} step ${violation.step}, ${revision}): [${violation.code}] ${violation.message}\n`)
  return violation
}

describe('dsh-seam inspect', () => {
  it('lists every request the adapter received, with the surface runs it left out and its revision', () => {
    const run = runCli('inspect', projected.path, '--json')
    expect(run.status).toBe(EXIT.ok)
    const report = JSON.parse(run.stdout) as { session: string; events: number; requests: RequestSummary[] }
    const sent = sentBy(projected.agent)
    expect(report.session).toBe('projected')
    expect(report.events).toBe(projected.events.length)
    expect(report.requests).toHaveLength(sent.length)
    report.requests.forEach((request, i) => {
      const surface = surfaceBefore(projected.events, request.seq)
      const excluded = new Set(selected(surface, request.excluded))
      const kept = surface.filter(seq => !excluded.has(seq))
      expect(JSON.stringify(kept.map(seq => deriveEventMessage(projected.events[seq]!)))).toBe(JSON.stringify(sent[i]!.messages))
      expect([request.surfaceNodes, request.includedNodes]).toEqual([surface.length, sent[i]!.messages.length])
      expect(request.revision).toBe(request.projectionSeq === undefined ? undefined : 'keep-last-3')
    })
    expect(report.requests.filter(request => request.projectionSeq !== undefined).length).toBe(projectionEvents(projected.events).length)
    expect(report.requests.some(request => request.excluded.length > 0)).toBe(true)
  })

  it('estimates tokens with the DSH token meter: the sent messages plus the request envelope', () => {
    const report = JSON.parse(runCli('inspect', projected.path, '--json').stdout) as { requests: RequestSummary[] }
    const sent = sentBy(projected.agent)
    const first = sent[0]!
    const envelope = Math.ceil(first.system!.length / 4) + 4 + Math.ceil(JSON.stringify(first.tools).length / 4) + 4
    report.requests.forEach((request, i) => {
      const messages = sent[i]!.messages.reduce((total, message) => total + loop.ctx.tokenMeter.estimateMessage(message), 0)
      expect(request.tokens).toBe(envelope + messages)
      expect(request.surfaceTokens).toBeGreaterThanOrEqual(request.tokens)
    })
  })

  it('prints an aligned table for people', () => {
    const run = runCli('inspect', projected.path)
    expect(run.status).toBe(EXIT.ok)
    const [head, columns, ...rows] = run.stdout.trimEnd().split('\n')
    expect(head).toBe(`session projected (format v0): ${projected.events.length} events, ${sentBy(projected.agent).length} requests, ${projectionEvents(projected.events).length} projected`)
    expect(columns).toMatch(/^turn +step +seq +surface +sent +excluded runs +tokens +surface tokens +revision$/)
    expect(rows).toHaveLength(sentBy(projected.agent).length)
    expect(rows.filter(row => row.endsWith('keep-last-3'))).toHaveLength(projectionEvents(projected.events).length)
  })

  it('escapes revisions: a newline cannot forge table rows and terminal escapes never reach the terminal, in inspect and verify alike', () => {
    const event = laterProjection()
    const forged = 'x\n  99    1  999  1  1  -  1  1  forged\u001b[2J\u001b]0;title\u0007\u009b31m\u202eevil'
    const { path } = withProjection('forged-revision', event, () => ({ revision: forged }))
    const table = runCli('inspect', path)
    expect(table).toMatchObject({ status: EXIT.ok, stderr: '' })
    // oxlint-disable-next-line no-control-regex -- the test looks for the control characters a terminal acts on
    expect(table.stdout).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202E]/)
    expect(table.stdout.trimEnd().split('\n').some(row => row.startsWith('  99'))).toBe(false)
    expect(table.stdout).toContain('x\\n  99 ')
    // A revision of at most 200 code units is one the host writes, whatever its characters: verify passes it.
    const verified = runCli('verify', path)
    expect(verified).toMatchObject({ status: EXIT.ok, stderr: '' })
    // oxlint-disable-next-line no-control-regex -- the test looks for the control characters a terminal acts on
    expect(verified.stdout).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202E]/)
    const json = runCli('inspect', path, '--json')
    // oxlint-disable-next-line no-control-regex -- the test looks for the control characters a terminal acts on
    expect(json.stdout).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202E]/)
  })
})

describe('dsh-seam verify', () => {
  it('exits 0 on logs the patched loop wrote, with and without projections', () => {
    const run = runCli('verify', projected.path)
    expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
    expect(run.stdout).toBe(`verified ${projected.path}: ${sentBy(projected.agent).length} requests rebuilt from ${projected.events.length} events; ${projectionEvents(projected.events).length} request/projection events hold the host invariants\n`)
    expect(runCli('verify', native.path).stdout).toMatch(new RegExp(`: ${sentBy(native.agent).length} requests rebuilt from \\d+ events; 0 request/projection events`))
  })

  it('reports the verdict as JSON with --json', () => {
    const run = runCli('verify', projected.path, '--json')
    expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
    expect(JSON.parse(run.stdout)).toEqual({
      file: projected.path,
      session: 'projected',
      events: projected.events.length,
      requests: sentBy(projected.agent).length,
      projected: projectionEvents(projected.events).length,
      ok: true,
      warnings: [],
    })
  })

  it('warns about a projection that includes part of an earlier tool-call unit, with its line, turn, step and revision', () => {
    const split = projectionEvents(projected.events).find(event => {
      if (event.data.step !== 1) return false
      const surface = surfaceBefore(projected.events, event.seq)
      return selected(surface, event.data.include).some(seq => projected.events[seq]!.type === 'tool/result')
    })!
    const { path, line } = withProjection('open-unit', split, ({ include }, surface) => {
      const chosen = selected(surface, include)
      const call = chosen.find(seq => projected.events[seq]!.type === 'assistant/message' && JSON.stringify(projected.events[seq]!.data).includes('tool-call'))!
      return { include: chosen.filter(seq => seq !== call).map(seq => [seq, seq] as [number, number]) }
    })
    const [warning, ...more] = warningsOf(path)
    expect(more).toEqual([])
    expect(warning).toMatchObject({ code: 'open-unit', seq: split.seq, line, turn: split.data.turn, step: split.data.step, revision: 'keep-last-3' })
    expect(warning!.detail).toMatch(/includes seq \d+ but not seq \d+ of its tool-call unit \[\d+, \d+\]/)
  })

  it('warns about a projection that leaves out the surface tail, and still names the first violation of two', () => {
    const [first, second] = projectionEvents(projected.events).slice(-2) as [ProjectionEvent, ProjectionEvent]
    const dropTail = (data: RequestProjection, surface: number[]): Partial<RequestProjection> => ({
      include: selected(surface, data.include).slice(0, -1).map(seq => [seq, seq] as [number, number]),
    })
    const late = withProjection('tail-late', second, dropTail)
    const [missing] = warningsOf(late.path)
    expect(missing).toMatchObject({ code: 'required-missing', seq: second.seq, line: late.line, turn: second.data.turn, step: second.data.step })
    expect(missing!.detail).toContain(`omits required seq ${surfaceBefore(projected.events, second.seq).at(-1)}`)
    const both = join(root, 'tail-both.jsonl')
    const line = rewriteEvent(late.path, both, first.seq, record => ({ ...record, data: { ...first.data, generation: 4 } }))
    expect(violationOf(both)).toMatchObject({ code: 'projection-generation', seq: first.seq, line, turn: first.data.turn, step: first.data.step, revision: 'keep-last-3' })
  })

  it('gives a foreign seq, a backward run and a count mismatch each its own code', () => {
    const event = laterProjection()
    const turnStart = projected.events.findLast(e => e.seq < event.seq && e.type === 'turn/start')!.seq
    const foreign = violationOf(withProjection('foreign', event, ({ include }) => ({ include: [[turnStart, turnStart], ...include] })).path)
    expect(foreign).toMatchObject({ code: 'foreign-seq', seq: event.seq, turn: event.data.turn, step: event.data.step, revision: 'keep-last-3' })
    expect(foreign.message).toContain(`seq ${turnStart}`)

    const backward = withProjection('backward', event, ({ include }, surface) => {
      const seqs = selected(surface, include)
      const runs = seqs.map(seq => [seq, seq] as [number, number])
      return { include: [runs.at(-1)!, ...runs.slice(0, -1)] }
    })
    expect(violationOf(backward.path)).toMatchObject({ code: 'unordered-ranges', seq: event.seq, line: backward.line, turn: event.data.turn, step: event.data.step })

    const miscounted = withProjection('miscounted', event, data => ({ includedNodes: data.includedNodes + 1 }))
    expect(violationOf(miscounted.path)).toMatchObject({ code: 'projection-counts', seq: event.seq, line: miscounted.line, turn: event.data.turn, step: event.data.step })
  })

  it('names a projection that another request\'s turn and step consumed', () => {
    const event = laterProjection()
    const { path, line } = withProjection('position', event, data => ({ turn: data.turn + 1 }))
    expect(violationOf(path)).toMatchObject({ code: 'projection-position', seq: event.seq, line, turn: event.data.turn + 1, step: event.data.step, revision: 'keep-last-3' })
  })
})
