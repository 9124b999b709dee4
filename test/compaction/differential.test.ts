/**
 * Agents without an `agent/context` listener: `measure: 'surface'` is stock compaction-basic, and the patched loop with
 * it sends the requests and writes the log the unmodified npm rc.8 loop does for the same script (pressure
 * compactions, a tool round trip, usage reports and a context overflow). `measure: 'projection'` judges each request
 * the loop sends, the surface plus the step's input, where stock judges the surface before the step: it still logs no
 * projection and sends no request larger than stock's largest (test/compaction/composition.test.ts shows a request
 * stock lets past the threshold that it does not).
 */

import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { canonicalJson, patchedDsh, stockDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import type { LastTurnsOptions, LastTurnsRun } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { requestPrice, runLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
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

describe('no agent/context listener', () => {
  it('measure: surface matches stock rc.8 with stock compaction-basic request for request and event for event', async () => {
    const stockRun = await runLastTurns({ dsh: stock, engine: { kind: 'basic' }, ...SCRIPT })
    const surfaceRun = await runLastTurns({ dsh: patched, engine: { kind: 'projection-aware', config: { measure: 'surface' } }, ...SCRIPT })
    expect(surfaceRun.loop.errors).toEqual([])
    expect(compactionsOf(stockRun.agent.session.events).map(c => c.turn)).toEqual(expect.arrayContaining([6, 12]))
    expect(stockRun.agent.session.events.some(e => e.type === 'tool/result')).toBe(true)
    expect(adapterRequests(surfaceRun)).toBe(adapterRequests(stockRun))
    expect(canonicalJson(surfaceRun.agent.session.events)).toBe(canonicalJson(stockRun.agent.session.events))
  })

  it('measure: projection judges the requests the loop sends: it logs no projection and sends no request larger than stock\'s largest', async () => {
    const stockRun = await runLastTurns({ dsh: stock, engine: { kind: 'basic' }, ...SCRIPT })
    const awareRun = await runLastTurns({ dsh: patched, engine: { kind: 'projection-aware' }, ...SCRIPT })
    expect(awareRun.loop.errors).toEqual([])
    expect(awareRun.compactions).toBeGreaterThan(0)
    expect(awareRun.agent.session.events.some(e => e.type === 'request/projection')).toBe(false)
    const price = (run: LastTurnsRun) => run.requests.map(request => requestPrice(awareRun.loop.ctx.tokenMeter, request))
    const largest = Math.max(...price(stockRun))
    expect(price(awareRun).every(tokens => tokens <= largest)).toBe(true)
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
