/**
 * The issue's headline scenario on real loops (2,000-token window, 40 turns, a "last 3 turns" agent/context
 * listener): stock compaction rewrites history the projection already leaves out, projection-aware compaction does
 * nothing while the projection fits, and both engines' counts are printed side by side.
 */

import { patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { compactionCounts, countsTable } from '../../packages/compaction-effective-projection/scenarios/counts.ts'
import { requestPrice, runLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { expectEveryRequestReplayed, loopRequests } from './support.ts'

const dsh = await patchedDsh()
const THRESHOLD = 1600

describe('a "last 3 turns" listener on a 2,000-token window, 40 turns', () => {
  it('stock compaction compacts k > 0 times; projection-aware compacts 0 times and every request fits and replays', async () => {
    const stock = await runLastTurns({ dsh, engine: { kind: 'basic' }, turns: 40, keepTurns: 3 })
    const aware = await runLastTurns({ dsh, engine: { kind: 'projection-aware' }, turns: 40, keepTurns: 3 })
    expect(stock.loop.errors).toEqual([])
    expect(aware.loop.errors).toEqual([])
    expect(stock.compactions).toBeGreaterThan(0)
    expect(stock.unsentCompacted).toBeGreaterThan(0)
    expect(aware.compactions).toBe(0)
    expect(aware.summarizations).toBe(0)
    expect(aware.requests).toHaveLength(40)
    const meter = aware.loop.ctx.tokenMeter
    expect(Math.max(...aware.requests.map(request => requestPrice(meter, request)))).toBeLessThan(THRESHOLD)
    expect(meter.measure(aware.agent.session).totalTokens).toBeGreaterThan(THRESHOLD * 4)
    expect(expectEveryRequestReplayed(aware.agent.session.events, loopRequests(aware.loop, aware.agent))).toBe(40)
    expectEveryRequestReplayed(stock.agent.session.events, loopRequests(stock.loop, stock.agent))
  })

  it('prints both engines’ counts side by side (the table `pnpm run compaction-counts` prints)', async () => {
    const rows = await compactionCounts()
    console.log(`\n${countsTable(rows)}\n`)
    const row = (scenario: string, loop: string, engine: string, listener: string) =>
      rows.find(r => r.scenario === scenario && r.loop === loop && r.engine === engine && r.listener === listener)!
    const fitStock = row('last 3 turns fit', 'patched', 'compaction-basic', 'last 3 turns')
    const fitAware = row('last 3 turns fit', 'patched', 'projection-aware', 'last 3 turns')
    expect(fitStock.compactions).toBeGreaterThan(0)
    expect(fitAware.compactions).toBe(0)
    expect(row('last 3 turns fit', 'patched', 'projection-aware, measure: surface', 'last 3 turns').compactions).toBe(fitStock.compactions)
    expect(row('last 3 turns fit', 'patched', 'projection-aware', 'none').compactions)
      .toBe(row('last 3 turns fit', 'stock', 'compaction-basic', 'none').compactions)
    const exceedStock = row('last 3 turns exceed', 'patched', 'compaction-basic', 'last 3 turns')
    const exceedAware = row('last 3 turns exceed', 'patched', 'projection-aware', 'last 3 turns')
    expect(exceedAware.compactions).toBeGreaterThan(0)
    expect(exceedAware.compactions).toBeLessThan(exceedStock.compactions)
    expect(exceedAware.unsentCompacted).toBe(0)
    expect(exceedStock.unsentCompacted).toBeGreaterThan(0)
    for (const r of rows) expect(r.requests).toBe(40)
    for (const r of rows.filter(r => r.listener !== 'none')) expect(r.peakRequestTokens).toBeLessThan(r.thresholdTokens)
  })
})
