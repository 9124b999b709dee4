/**
 * P8: `dsh-seam simulate` is linear in the log: reading a recorded log and replaying every request under the
 * keep-last-turns policy beside the recorded selection, at 4× steps in turns.
 * @module bench/p8-simulate
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readSessionLog } from '@dsh-seam/agent-context'
import { loadPolicy, meterPricer, simulate } from '@dsh-seam/cli'
import { recordLogs } from './p3-cli.ts'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { median, significant, timeOnce } from './stats.ts'

/** Largest growth of simulate time per 4× turns. */
const TARGET_GROWTH_PER_4X = 5
const RUNS = 3
const POLICY = fileURLToPath(import.meta.resolve('@dsh-seam/context-policies/keep-last-turns'))

/**
 * @param quick - logs of 250 and 1,000 turns.
 * @param log - progress sink.
 * @returns the P8 section.
 */
export async function benchSimulate(quick: boolean, log: (line: string) => void): Promise<Section> {
  const sizes = quick ? [250, 1_000] : [1_000, 4_000, 16_000]
  const dir = mkdtempSync(join(tmpdir(), 'bench-p8-simulate-'))
  try {
    const files = await recordLogs(dir, sizes, log)
    const { pricer, dispose } = await meterPricer()
    const points: { size: number; bytes: number; requests: number; events: number; ms: number; tokens: [number, number] }[] = []
    for (const size of sizes) {
      const path = files.get(size) as string
      let figures: [number, number, number, number] = [0, 0, 0, 0]
      const times: number[] = []
      for (let run = 0; run < RUNS; run++) {
        // simulate ends the policy's worker, so each run loads it (its worker's start-up is timed with the run).
        times.push(await timeOnce(async () => {
          const { header, events } = await readSessionLog(path)
          const simulation = await simulate(header, events, [await loadPolicy(POLICY)], { pricer })
          const [recorded, replayed] = simulation.figures
          figures = [events.length, recorded?.requests ?? 0, recorded?.tokens.sum ?? 0, replayed?.tokens.sum ?? 0]
        }))
      }
      const ms = median(times)
      const [events, requests, recordedTokens, replayedTokens] = figures
      log(`P8 ${size} turns: ${significant(ms / 1000)} s`)
      points.push({ size, bytes: statSync(path).size, requests, events, ms, tokens: [recordedTokens, replayedTokens] })
    }
    await dispose()
    const growth = points.slice(1).map((point, i) => {
      const previous = points[i] as (typeof points)[number]
      return (point.ms / previous.ms) ** (Math.log(4) / Math.log(point.size / previous.size))
    })
    const worst = Math.max(...growth)
    return {
      id: 'P8',
      title: '`dsh-seam simulate` on recorded logs',
      method: 'The P3-cli recording (a real patched loop, every third turn calls `echo`, a keep-last-6-nodes listener), '
        + `cut at ${sizes.map(size => size.toLocaleString('en-US')).join(', ')} turns. In process, median of ${RUNS}: `
        + '`readSessionLog` then `simulate` with the keep-last-3-turns example policy beside the recorded selection (the '
        + 'surface fold of `LogAnalyzer`, the listener in its worker, the host\'s `normalizeOffer`, token and prefix figures per request). '
        + 'Growth is normalized to a 4× step in turns.',
      target: `simulate time grows ≤ ×${TARGET_GROWTH_PER_4X} per 4× turns`,
      verdict: verdict(worst <= TARGET_GROWTH_PER_4X, `growth ≤ ×${significant(worst, 2)} per 4×`),
      table: {
        columns: ['turns', 'events / requests', 'file MiB', 'simulate s', 'growth per 4×', 'recorded tokens', 'keep-last-3-turns tokens'],
        rows: points.map((point, i) => [
          point.size.toLocaleString('en-US'),
          `${point.events.toLocaleString('en-US')} / ${point.requests.toLocaleString('en-US')}`,
          significant(point.bytes / 2 ** 20),
          significant(point.ms / 1000),
          i === 0 ? '-' : `×${significant(growth[i - 1] as number, 2)}`,
          point.tokens[0].toLocaleString('en-US'),
          point.tokens[1].toLocaleString('en-US'),
        ]),
      },
      notes: [
        'Each request costs what the policies read and send: the offered node array grows with the surface instead of '
          + 'being rebuilt, the required set and normalization cost what is chosen, and the shared prefix is compared '
          + 'message by message up to the first difference.',
      ],
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
