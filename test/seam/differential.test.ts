/**
 * Invariant 6: with no listener the patched packages send byte-identical requests and write a byte-identical log
 * to stock rc.8 from npm, and logs written by stock rc.8 resume on the patched build.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, canonicalJson, failureReply, patchedDsh, stockDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { expectRequestsRebuiltFromLog, requestsOf } from './support.ts'

const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })

const script = () => [
  textReply('Hello there.', { inputTokens: 20, outputTokens: 3 }),
  toolCallReply([{ id: 'call-1', name: 'echo', args: { text: 'a' } }, { id: 'call-2', name: 'echo', args: { text: 'b' } }]),
  failureReply({ code: 'OVERLOADED', message: 'try again' }),
  textReply('Both echoed.'),
  toolCallReply([{ id: 'call-3', name: 'echo', args: { text: 'c' } }]),
  textReply('Done.', { inputTokens: 90, outputTokens: 2 }),
]

async function drive(dsh: DshModules, persistRoot?: string) {
  const loop = await bootLoop(dsh, { script: script(), ...persistRoot === undefined ? {} : { persistRoot } })
  const agent = loop.create('differential')
  let retried = false
  agent.ctx.on('agent/request-error', async (_payload, next) => {
    if (retried) return next()
    retried = true
    return { kind: 'retry' as const }
  })
  for (const text of ['hi', 'echo a and b', 'echo c']) await loop.say(agent, text)
  return { loop, agent }
}

function requestJson(loop: Awaited<ReturnType<typeof drive>>['loop'], agent: Agent): string {
  return canonicalJson(requestsOf(loop, agent).map(({ signal: _signal, ...request }) => request))
}

describe('no listener: stock rc.8 and the patched build are indistinguishable', () => {
  it('sends identical requests and writes an identical log for the same script', async () => {
    const stock = await drive(await stockDsh())
    const patched = await drive(await patchedDsh())
    expect(requestsOf(patched.loop, patched.agent)).toHaveLength(6)
    expect(requestJson(patched.loop, patched.agent)).toBe(requestJson(stock.loop, stock.agent))
    expect(canonicalJson(patched.agent.session.events)).toBe(canonicalJson(stock.agent.session.events))
    expect(patched.agent.session.events.some(e => e.type === 'request/projection')).toBe(false)
    expectRequestsRebuiltFromLog(patched.loop, patched.agent)
  })

  it('resumes a log persisted by stock rc.8 and continues under the invariants', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-stock-log-'))
    roots.push(root)
    const stock = await drive(await stockDsh(), root)
    await stock.loop.ctx.sessions.flush(stock.agent.session)
    const stockEvents = stock.agent.session.events.length
    const patched = await bootLoop(await patchedDsh(), { persistRoot: root, fallback: textReply('resumed') })
    const { agent } = await patched.ctx.agentLoop.resume(patched.ctx, {
      resumeSessionId: patched.dsh.session.SessionId('differential'),
      agentOptions: { provider: 'fake', model: 'fake-model' },
    })
    expect(canonicalJson(agent.session.events.slice(0, stockEvents))).toBe(canonicalJson(stock.agent.session.events))
    agent.ctx.on('agent/context', async (_payload, next) => {
      const all = await next()
      return { include: all.include.slice(-1), revision: 'tail' }
    })
    await patched.say(agent, 'after resume')
    expect(patched.errors.map(e => String(e.error))).toEqual([])
    expect(requestsOf(patched, agent).at(-1)!.messages).toHaveLength(1)
  })
})

describe('pay only when used: what the host reads of the log', () => {
  /** Drive ten turns with tool calls and count every read of `Session.events`, which copies the log after each append. */
  async function eventReads(dsh: DshModules, listen: boolean): Promise<number> {
    const loop = await bootLoop(dsh, { invariants: false, script: script().filter(reply => reply.length > 1), fallback: textReply('ok') })
    const agent = loop.create('reads')
    if (listen) agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-3), revision: 'last-3' }))
    let reads = 0
    const events = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(agent.session) as object, 'events')!
    Object.defineProperty(agent.session, 'events', { get() { reads++; return events.get!.call(this) as unknown } })
    for (const text of ['hi', 'echo a and b', 'echo c', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten']) await loop.say(agent, text)
    expect(loop.errors).toEqual([])
    expect(loop.adapter.requests.length).toBe(12)
    return reads
  }

  it('with no agent/context listener the step reads the log exactly as stock rc.8 does', async () => {
    const stock = await eventReads(await stockDsh(), false)
    expect(await eventReads(await patchedDsh(), false)).toBe(stock)
  })

  it('looks up agent/context and agent/context-selected once per request each, and gives listeners their declared payloads', async () => {
    const loop = await bootLoop(await patchedDsh(), { fallback: textReply('ok') })
    const reported: [string, object][] = []
    loop.ctx.on('internal/dispatch', (_mode, name, args) => {
      if (name === 'agent/context' || name === 'agent/context-selected') reported.push([name, args[0] as object])
    })
    const agent = loop.create('dispatched')
    await loop.say(agent, 'without a listener')
    const heard: object[] = []
    agent.ctx.on('agent/context', async (payload, next) => {
      heard.push(payload)
      return { include: (await next()).include.slice(-1), revision: 'last-1' }
    })
    await loop.say(agent, 'with one')
    const shown: object[] = []
    agent.ctx.on('agent/context-selected', (payload) => { shown.push(payload) })
    await loop.say(agent, 'observed')
    expect(loop.errors).toEqual([])
    // The reported payloads are the ones the listeners get: the offer is added once a listener is found, before it runs.
    expect(reported[2]![1]).toBe(heard[0])
    expect(reported[5]![1]).toBe(shown[0])
    const seen = reported.map(([name, payload]) => `${name}: ${Object.keys(payload).sort().join(' ')}`)
    const bare = 'agent signal step system tools turn'
    const context = 'agent/context: agent generation nodes requiredSeqs signal step system tools turn'
    const selected = 'agent/context-selected: agent include nodes replaceableSeqs requiredSeqs signal step system tools turn'
    expect(seen).toEqual([`agent/context: ${bare}`, `agent/context-selected: ${bare}`, context, `agent/context-selected: ${bare}`, context, selected])
  })

  it('with a listener the host reads the whole log once, when it starts following it, not once per request', async () => {
    const stock = await eventReads(await stockDsh(), false)
    expect(await eventReads(await patchedDsh(), true)).toBe(stock + 1)
  })
})
