/**
 * Provider usage calibrates projected pressure only against the request that usage answered: the sample is the
 * price of that request rebuilt from the log with its own `request/projection`, never the full surface.
 */

import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { UsageCalibration } from '@dsh-seam/compaction-effective-projection'
import { replayRequests } from '@dsh-seam/agent-context'
import { patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import type { Context } from '@deepseek-ai/cordis'
import { requestPrice, runLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { compactionsOf, loopRequests } from './support.ts'

const dsh = await patchedDsh()
const replayLast = (events: Parameters<typeof replayRequests>[0]) => replayRequests(events).at(-1)

/** Usage that reports `ratio(turn)` times the meter's price of the request it answers. */
const reporting = (ratio: (turn: number) => number) => (request: GenerateOptions, ctx: Context, turn: number) =>
  ({ inputTokens: Math.round(ratio(turn) * requestPrice(ctx.tokenMeter, request)), outputTokens: 10 })

describe('calibration by provider usage', () => {
  it('samples the price of the projected request the usage answered, not the surface', async () => {
    const run = await runLastTurns({ dsh, engine: { kind: 'projection-aware' }, turns: 9, keepTurns: 3, usage: reporting(() => 2) })
    const { events } = run.agent.session
    const meter = run.loop.ctx.tokenMeter
    const calibration = new UsageCalibration(meter)
    calibration.follow(events.length, seq => events[seq])
    const sample = calibration.sample!
    expect(sample.seq).toBe(events.findLast(event => event.type === 'assistant/message' && event.data.usage !== undefined)!.seq)
    // Following the log in two pieces, as the engine does while it grows, reads each event once and agrees.
    const incremental = new UsageCalibration(meter)
    incremental.follow(Math.floor(events.length / 2), seq => events[seq])
    expect(incremental.follow(events.length, seq => events[seq])).toEqual(replayLast(events))
    expect(incremental.sample).toEqual(sample)
    const answered = loopRequests(run.loop, run.agent).at(-1)!
    expect(sample.estimatedTokens).toBe(requestPrice(meter, answered))
    expect(sample.promptTokens).toBe(Math.round(2 * requestPrice(meter, answered)))
    expect(meter.measure(run.agent.session).surfaceTokens).toBeGreaterThan(2 * sample.estimatedTokens)
  })

  it('compacts once usage shows the projection under-priced, where exact usage leaves it alone', async () => {
    const sizes = { turns: 12, keepTurns: 3, replyChars: 2200 }
    const exact = await runLastTurns({ dsh, engine: { kind: 'projection-aware' }, ...sizes, usage: reporting(() => 1) })
    const underPriced = await runLastTurns({ dsh, engine: { kind: 'projection-aware' }, ...sizes, usage: reporting(turn => (turn < 7 ? 1 : 1.5)) })
    expect(exact.loop.errors).toEqual([])
    expect(underPriced.loop.errors).toEqual([])
    expect(exact.compactions).toBe(0)
    const turns = compactionsOf(underPriced.agent.session.events).map(c => c.turn as number)
    expect(turns.length).toBeGreaterThan(0)
    expect(Math.min(...turns)).toBeGreaterThanOrEqual(8)
  })
})
