/**
 * `dsh-context inspect` and `verify`, run as a child process on session logs persisted by a real patched loop.
 */

import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage } from '@deepseek-ai/dsh-session'
import { decodeInclude, readSessionLog, projectionEvents } from '@dsh-context/agent-context'
import type { RequestSummary } from '@dsh-context/cli'
import { EXIT } from '@dsh-context/cli'
import type { BootedLoop } from '@dsh-context/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh, sessionLogPath } from '@dsh-context/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rewriteEvent, runCli, surfaceBefore } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-context-cli-'))
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


/** A copy of the projected log with one `request/projection` rewritten; counts follow the new ranges. */
function withProjection(name: string, event: SessionEvent<'request/projection'>, change: (data: RequestProjection, surface: number[]) => Partial<RequestProjection>): string {
  const to = join(root, `${name}.jsonl`)
  rewriteEvent(projected.path, to, event.seq, record => {
    const surface = surfaceBefore(projected.events, event.seq)
    const data = { ...event.data, ...change(event.data, surface) }
    return { ...record, data: { ...data, includedNodes: decodeInclude(surface, data.include).length } }
  })
  return to
}

describe('dsh-context inspect', () => {
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
      const excluded = new Set(request.excluded.flatMap(range => decodeInclude(surface, [range])))
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
})

describe('dsh-context verify', () => {
  it('exits 0 on logs the patched loop wrote, with and without projections', () => {
    const run = runCli('verify', projected.path)
    expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
    expect(run.stdout).toBe(`verified ${projected.path}: ${sentBy(projected.agent).length} requests rebuilt from ${projected.events.length} events; ${projectionEvents(projected.events).length} request/projection events hold the host invariants\n`)
    expect(runCli('verify', native.path).stdout).toMatch(new RegExp(`: ${sentBy(native.agent).length} requests rebuilt from \\d+ events; 0 request/projection events`))
  })

  it('names a projection that includes part of an earlier tool-call unit', () => {
    const split = projectionEvents(projected.events).find(event => {
      if (event.data.step !== 1) return false
      const surface = surfaceBefore(projected.events, event.seq)
      return decodeInclude(surface, event.data.include).some(seq => projected.events[seq]!.type === 'tool/result')
    })!
    const path = withProjection('open-unit', split, ({ include }, surface) => {
      const chosen = decodeInclude(surface, include)
      const call = chosen.find(seq => projected.events[seq]!.type === 'assistant/message' && JSON.stringify(projected.events[seq]!.data).includes('tool-call'))!
      return { include: chosen.filter(seq => seq !== call).map(seq => [seq, seq] as [number, number]) }
    })
    const run = runCli('verify', path)
    expect(run.status).toBe(EXIT.violation)
    expect(run.stderr).toMatch(new RegExp(`^dsh-context verify: ${path}: request/projection at seq ${split.seq} \\(turn ${split.data.turn} step ${split.data.step}, revision "keep-last-3"\\) includes seq \\d+ but not seq \\d+ of its tool-call unit \\[\\d+, \\d+\\]; consumed by the request at seq \\d+\\n$`))
  })

  it('names a projection that leaves out the surface tail, and the first of two bad ones', () => {
    const [first, second] = projectionEvents(projected.events).slice(-2) as [SessionEvent<'request/projection'>, SessionEvent<'request/projection'>]
    const dropTail = (data: RequestProjection, surface: number[]): Partial<RequestProjection> => ({
      include: decodeInclude(surface, data.include).slice(0, -1).map(seq => [seq, seq] as [number, number]),
    })
    const late = withProjection('tail-late', second, dropTail)
    expect(runCli('verify', late).stderr).toMatch(new RegExp(`request/projection at seq ${second.seq} .* omits required seq ${surfaceBefore(projected.events, second.seq).at(-1)};`))
    const both = join(root, 'tail-both.jsonl')
    rewriteEvent(late, both, first.seq, record => ({ ...record, data: { ...first.data, generation: 4 } }))
    const run = runCli('verify', both)
    expect(run.status).toBe(EXIT.violation)
    expect(run.stderr).toMatch(new RegExp(`^dsh-context verify: ${both}: .*seq ${first.seq}\\b.*generation 4\\b`))
  })

  it('names a projection whose ranges reach outside the surface', () => {
    const event = projectionEvents(projected.events)[0]!
    const turnStart = projected.events.findLast(e => e.seq < event.seq && e.type === 'turn/start')!.seq
    const run = runCli('verify', withProjection('foreign', event, ({ include }) => ({ include: [[turnStart, turnStart], ...include] })))
    expect(run.status).toBe(EXIT.violation)
    expect(run.stderr).toContain(`seq ${event.seq}`)
    expect(run.stderr).toContain(`seq ${turnStart}`)
  })
})

describe('dsh-context on logs it cannot read', () => {
  it('reports a missing file', () => {
    const run = runCli('verify', join(root, 'absent.jsonl'))
    expect(run).toMatchObject({ status: EXIT.unreadable, stdout: '' })
    expect(run.stderr).toBe(`dsh-context: session log ${join(root, 'absent.jsonl')}: does not exist\n`)
  })

  it('reports a truncated last line with its line number', () => {
    const text = readFileSync(projected.path, 'utf8')
    const path = join(root, 'truncated.jsonl')
    writeFileSync(path, text.slice(0, text.length - 20))
    const run = runCli('inspect', path)
    expect(run.status).toBe(EXIT.unreadable)
    expect(run.stderr).toBe(`dsh-context: session log ${path} line ${text.trimEnd().split('\n').length}: ends inside this line: its write did not complete\n`)
  })

  it('reports an event type this build does not know', () => {
    const path = join(root, 'unknown-type.jsonl')
    const event = projected.events.find(e => e.type === 'request/context')!
    rewriteEvent(projected.path, path, event.seq, record => ({ ...record, type: 'tavern/binding' }))
    const run = runCli('verify', path)
    expect(run.status).toBe(EXIT.unreadable)
    expect(run.stderr).toMatch(new RegExp(`line \\d+: holds event type "tavern/binding" \\(seq ${event.seq}\\), unknown to this build and not marked ignorable\\n$`))
  })

  it('reports a log written by a DSH build with another session format', () => {
    const path = join(root, 'format-v1.jsonl')
    copyFileSync(projected.path, path)
    const [header, ...rest] = readFileSync(path, 'utf8').split('\n')
    writeFileSync(path, [JSON.stringify({ ...JSON.parse(header!) as object, version: 1 }), ...rest].join('\n'))
    const run = runCli('verify', path)
    expect(run.status).toBe(EXIT.unreadable)
    expect(run.stderr).toBe(`dsh-context: session log ${path} line 1: uses session log format v1; this build reads only v0\n`)
  })

  it('rejects unknown commands and options with its usage', () => {
    expect(runCli('replay', projected.path)).toMatchObject({ status: EXIT.unreadable, stderr: expect.stringMatching(/^usage: dsh-context inspect/) as unknown })
    expect(runCli('verify', projected.path, '--json').status).toBe(EXIT.unreadable)
    expect(runCli('inspect', projected.path, '--colour').stderr).toMatch(/^dsh-context: Unknown option '--colour'/)
  })
})
