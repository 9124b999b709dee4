/**
 * One persisted session of thousands of turns with a keep-last projection listener and DSH's invariants on. The host
 * holds no per-request state (the offer is one node list, grown in place), heap grows in proportion to the log, and
 * every request verifies, in process and with `dsh-seam verify` on the file; `report` pages it and, like `simulate`,
 * reports progress on stderr only when stderr is a terminal.
 *
 * `LONG_SESSION_TURNS` sets the length (default 5,000: about 75 s on a 2-core machine, heap +40 MB after GC for a
 * 14.6 MB session file). A listener is offered the whole surface on every request and DSH's invariants re-read the
 * log, both O(surface) per request, so a session's time grows with the square of its turns.
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { projectionEvents } from '@dsh-seam/agent-context'
import { EXIT, main, PROGRESS_MIN_BYTES } from '@dsh-seam/cli'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../cli/support.ts'
import { expectAgentVerifies, heapAfterGc } from './support.ts'

const KEEP_LAST_TURNS = fileURLToPath(import.meta.resolve('@dsh-seam/context-policies/keep-last-turns'))
const TURNS = Number(process.env['LONG_SESSION_TURNS'] ?? 5_000)
if (!Number.isSafeInteger(TURNS) || TURNS < 100) throw new Error(`LONG_SESSION_TURNS must be an integer ≥ 100, got ${process.env['LONG_SESSION_TURNS']}`)
const root = mkdtempSync(join(tmpdir(), 'dsh-seam-long-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`

describe(`a ${TURNS}-turn session`, () => {
  it('keeps host memory bounded and every request verifiable', { timeout: Math.max(120_000, TURNS * 120) }, async () => {
    const loop = await bootLoop(await patchedDsh(), { persistRoot: root, fallback: conversationReply() })
    const agent = loop.create('long')
    const keep = keepLastNodes(6)
    // The offer is the host's own node list, grown in place: one array per surface generation, none per request.
    const offered = { total: 0, lists: new Set<readonly unknown[]>() }
    agent.ctx.on('agent/context', (payload, next) => {
      offered.total += 1
      offered.lists.add(payload.nodes)
      return keep(payload, next)
    })
    const heapBefore = heapAfterGc()
    const msPerTurn: number[] = []
    let started = performance.now()
    for (let turn = 1; turn <= TURNS; turn++) {
      await loop.say(agent, conversationTurn(turn))
      if (turn % 500 === 0) {
        msPerTurn.push((performance.now() - started) / 500)
        started = performance.now()
      }
    }
    await loop.ctx.sessions.flush(agent.session)
    await new Promise(resolve => setImmediate(resolve))
    heapAfterGc()
    await new Promise(resolve => setImmediate(resolve))
    const heapAfter = heapAfterGc()
    const events = agent.session.events
    const logBytes = statSync(sessionLogPath(loop, agent)).size
    console.log([
      `${TURNS} turns, ${events.length} events, ${loop.adapter.requests.length} requests, ${projectionEvents(events).length} projected`,
      `heap after GC: ${mb(heapBefore)} before, ${mb(heapAfter)} after (+${mb(heapAfter - heapBefore)}); session file ${mb(logBytes)}`,
      `offered node lists: ${offered.lists.size} for ${offered.total} requests`,
      `ms per turn by 500 turns: ${msPerTurn.map(ms => ms.toFixed(1)).join(', ')}`,
    ].join('\n'))

    expect(loop.errors).toEqual([])
    expect(offered.lists.size).toBe(1)
    expect(heapAfter - heapBefore).toBeLessThan(6 * logBytes)
    expect(await expectAgentVerifies(loop, agent)).toBe(loop.adapter.requests.length)

    const verified = runCli('verify', sessionLogPath(loop, agent))
    expect(verified.status).toBe(EXIT.ok)
    expect(logBytes).toBeGreaterThanOrEqual(PROGRESS_MIN_BYTES)
    expect(verified.stderr).toMatch(/^(dsh-seam: [\d.]+\/[\d.]+ MiB read, [\d,]+ events \(\d+0%\)\n)+$/)
    expect(verified.stderr.trimEnd().split('\n').at(-1)).toMatch(/ \(100%\)$/)

    const html = join(root, 'long.html')
    const page = runCli('report', sessionLogPath(loop, agent), '-o', html)
    expect(page).toMatchObject({ status: EXIT.ok, stderr: '' })
    const pages = Math.ceil(loop.adapter.requests.length / 200)
    expect(page.stdout).toContain(`${loop.adapter.requests.length} requests × `)
    expect(page.stdout).toContain(`${pages} map pages of 200 requests`)
    for (const command of [['report', '-o', html], ['simulate', '--policy', KEEP_LAST_TURNS]]) {
      let stderr = ''
      const status = await main([command[0]!, sessionLogPath(loop, agent), ...command.slice(1)], { stdout: { write: () => true }, stderr: { write: (text: string) => { stderr += text }, isTTY: true } })
      expect(status).toBe(EXIT.ok)
      expect(stderr).toMatch(/^(dsh-seam: [\d.]+\/[\d.]+ MiB read, [\d,]+ events \(\d+0%\)\n)+(dsh-seam: [\d,]+\/[\d,]+ events replayed under 2 selections \(\d+0%\)\n)*$/)
      expect(stderr.trimEnd().split('\n').at(-1)).toMatch(/ \(100%\)$/)
    }
  })
})
