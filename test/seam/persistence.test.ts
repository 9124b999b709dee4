/**
 * A persisted JSONL session with `request/projection` events resumes on the patched build and every request still
 * rebuilds from the log; stock rc.8 refuses the same log with DSH's own error (the expected format behaviour). The
 * patch leaves DSH's read rule for other types alone, and its `Session.append` refuses a `request/projection` that is
 * not one (what `hasAgentContextSeam` asks the app's own dsh-session).
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { projectionEvents } from '@dsh-seam/agent-context'
import { hasAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import type { BootedLoop, DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, canonicalJson, patchedDsh, rebuildRequestsByPrefix, stockDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { requestsOf, textOf } from './support.ts'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /** A plugin's log-only record, as a downstream plugin declares one. */
    'plugin/mode': { mode: string }
  }
}

const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })

const keepLastTwo = (agent: Agent): void => {
  agent.ctx.on('agent/context', async (_payload, next) => {
    const all = await next()
    return { include: all.include.slice(-2), revision: 'last-2' }
  })
}

async function resume(loop: BootedLoop, id: string): Promise<Agent> {
  const { agent } = await loop.ctx.agentLoop.resume(loop.ctx, {
    resumeSessionId: loop.dsh.session.SessionId(id),
    agentOptions: { provider: 'fake', model: 'fake-model' },
  })
  return agent
}

async function persistedProjectedSession(): Promise<{ root: string; events: string; count: number; sent: string[] }> {
  const root = mkdtempSync(join(tmpdir(), 'dsh-projected-log-'))
  roots.push(root)
  const loop = await bootLoop(await patchedDsh(), {
    persistRoot: root,
    script: [textReply('one'), toolCallReply([{ id: 'call-1', name: 'echo', args: { text: 'x' } }]), textReply('two'), textReply('three')],
  })
  const agent = loop.create('projected')
  keepLastTwo(agent)
  for (const text of ['first', 'second', 'third']) await loop.say(agent, text)
  await loop.ctx.sessions.flush(agent.session)
  expect(projectionEvents(agent.session.events).length).toBeGreaterThan(0)
  return { root, events: canonicalJson(agent.session.events), count: agent.session.events.length, sent: requestsOf(loop, agent).map(r => JSON.stringify(r.messages)) }
}

describe('persisted logs with request/projection', () => {
  it('resume on the patched build; every earlier and later request rebuilds from the log', async () => {
    const { root, events, count, sent } = await persistedProjectedSession()
    const loop = await bootLoop(await patchedDsh(), { persistRoot: root, fallback: textReply('after resume') })
    const agent = await resume(loop, 'projected')
    expect(canonicalJson(agent.session.events.slice(0, count))).toBe(events)
    keepLastTwo(agent)
    await loop.say(agent, 'fourth')
    expect(loop.errors.map(e => String(e.error))).toEqual([])
    // The last two nodes are the third reply and "fourth"; the host opens the request with the user message before them.
    expect(requestsOf(loop, agent)[0]!.messages.map(textOf)).toEqual(['third', 'three', 'fourth'])
    expect(projectionEvents(agent.session.events).at(-1)!.data).toMatchObject({ turn: 4, step: 1, revision: 'last-2', includedNodes: 3 })
    const rebuilt = rebuildRequestsByPrefix(loop.dsh, agent.session.events).map(r => JSON.stringify(r.messages))
    expect(rebuilt).toEqual([...sent, ...requestsOf(loop, agent).map(r => JSON.stringify(r.messages))])
    expect(rebuilt).toHaveLength(5)
  })

  it('is refused by stock rc.8 with DSH’s own SessionFormatUnsupportedError', async () => {
    const { root } = await persistedProjectedSession()
    const stock: DshModules = await stockDsh()
    const loop = await bootLoop(stock, { persistRoot: root, fallback: textReply('never') })
    await expect(resume(loop, 'projected')).rejects.toThrow(/event type "request\/projection" \(seq \d+\) unknown to this harness and not marked ignorable/)
    await expect(resume(loop, 'projected')).rejects.toMatchObject({ name: 'SessionFormatUnsupportedError' })
    expect(loop.adapter.requests).toEqual([])
  })

  it('refuses, on the patched build as on stock rc.8, a log holding a plugin event type DSH does not know', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-plugin-event-log-'))
    roots.push(root)
    const loop = await bootLoop(await patchedDsh(), { persistRoot: root, fallback: textReply('ok') })
    const agent = loop.create('plugin-event')
    await loop.say(agent, 'first')
    const appended = agent.session.append('plugin/mode', { mode: 'managed' })
    expect(Object.hasOwn(appended, 'ignorable')).toBe(false)
    await loop.say(agent, 'second')
    await loop.ctx.sessions.flush(agent.session)
    for (const dsh of [await patchedDsh(), await stockDsh()]) {
      const again = await bootLoop(dsh, { persistRoot: root, fallback: textReply('never') })
      await expect(resume(again, 'plugin-event')).rejects.toMatchObject({
        name: 'SessionFormatUnsupportedError',
        message: expect.stringMatching(/event type "plugin\/mode" \(seq \d+\) unknown to this harness and not marked ignorable/),
      })
      expect(again.adapter.requests).toEqual([])
    }
  })

  it('refuses a request/projection that is not one before the log changes; stock rc.8 appends it', async () => {
    const loop = await bootLoop(await patchedDsh(), { fallback: textReply('ok') })
    const agent = loop.create('projection-shape')
    await loop.say(agent, 'first')
    const before = agent.session.events.length
    for (const data of [{}, { turn: 1, step: 1, generation: 0, include: [[2, 1]], surfaceNodes: 3, includedNodes: -1 }]) {
      expect(() => agent.session.append('request/projection', data as never))
        .toThrow(/^session event "request\/projection" is not \{ turn, step, generation, include: \[first, last\]\[\], surfaceNodes, includedNodes \}/)
    }
    expect(agent.session.events).toHaveLength(before)
    await loop.say(agent, 'second')
    expect(loop.errors).toEqual([])
    expect(hasAgentContextSeam(loop.ctx)).toBe(true)

    const stock = await bootLoop(await stockDsh(), { fallback: textReply('ok') })
    const plain = stock.create('projection-shape')
    const appended = (plain.session.append as (type: string, data: unknown) => { type: string; seq: number })('request/projection', {})
    expect(appended).toMatchObject({ type: 'request/projection', seq: plain.session.events.length - 1 })
    expect(hasAgentContextSeam(stock.ctx)).toBe(false)
  })
})
