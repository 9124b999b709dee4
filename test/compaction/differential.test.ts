/**
 * Agents without an `agent/context` listener get exactly stock behaviour: the patched loop with projection-aware
 * compaction and the unmodified npm rc.8 loop with stock compaction-basic send identical requests and write identical
 * logs for the same script (pressure compactions, a tool round trip, usage reports and a context overflow).
 * `measure: 'surface'` is stock compaction-basic even for a projected agent.
 */

import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { canonicalJson, patchedDsh, stockDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import type { LastTurnsOptions, LastTurnsRun } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { runLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, expectEveryRequestReplayed, loopRequests } from './support.ts'

const [patched, stock] = [await patchedDsh(), await stockDsh()]

const SCRIPT = {
  turns: 16,
  toolEvery: 3,
  overflowAt: 12,
  usage: (request: GenerateOptions) => ({ inputTokens: 90 * request.messages.length, outputTokens: 40 }),
} satisfies Partial<LastTurnsOptions>

function adapterRequests(run: LastTurnsRun): string {
  return canonicalJson(run.loop.adapter.requests.map(({ signal: _signal, ...request }) => request))
}

describe('no agent/context listener: projection-aware compaction is stock compaction', () => {
  it('matches stock rc.8 with stock compaction-basic request for request and event for event', async () => {
    const stockRun = await runLastTurns({ dsh: stock, engine: { kind: 'basic' }, ...SCRIPT })
    const awareRun = await runLastTurns({ dsh: patched, engine: { kind: 'projection-aware' }, ...SCRIPT })
    expect(awareRun.loop.errors).toEqual([])
    expect(compactionsOf(stockRun.agent.session.events).map(c => c.turn)).toEqual(expect.arrayContaining([6, 12]))
    expect(stockRun.agent.session.events.some(e => e.type === 'tool/result')).toBe(true)
    expect(adapterRequests(awareRun)).toBe(adapterRequests(stockRun))
    expect(canonicalJson(awareRun.agent.session.events)).toBe(canonicalJson(stockRun.agent.session.events))
    expectEveryRequestReplayed(awareRun.agent.session.events, loopRequests(awareRun.loop, awareRun.agent))
  })
})

describe('measure: surface', () => {
  it('is compaction-basic for a projected agent too', async () => {
    const basicRun = await runLastTurns({ dsh: patched, engine: { kind: 'basic' }, keepTurns: 3, ...SCRIPT })
    const surfaceRun = await runLastTurns({ dsh: patched, engine: { kind: 'projection-aware', config: { measure: 'surface' } }, keepTurns: 3, ...SCRIPT })
    expect(surfaceRun.loop.errors).toEqual([])
    expect(surfaceRun.compactions).toBeGreaterThan(0)
    expect(adapterRequests(surfaceRun)).toBe(adapterRequests(basicRun))
    expect(canonicalJson(surfaceRun.agent.session.events)).toBe(canonicalJson(basicRun.agent.session.events))
  })
})
