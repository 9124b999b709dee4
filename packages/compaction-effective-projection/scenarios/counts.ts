/**
 * Compaction counts of stock compaction and projection-aware compaction on the scenarios, side by side.
 * @module @dsh-seam/compaction-effective-projection/scenarios/counts
 */

import type { DshModules } from '@dsh-seam/loop-testkit'
import { patchedDsh, stockDsh } from '@dsh-seam/loop-testkit'
import type { RequestPricer } from '@dsh-seam/compaction-effective-projection'
import type { EngineChoice, LastTurnsOptions } from './last-turns.ts'
import { requestPrice, runLastTurns } from './last-turns.ts'

/** One configuration's counts. */
export interface CountsRow {
  readonly scenario: string
  readonly loop: DshModules['kind']
  readonly engine: string
  readonly listener: string
  readonly turns: number
  readonly compactions: number
  readonly summarizations: number
  readonly requests: number
  readonly summarizedTokens: number
  readonly unsentCompacted: number
  /** The priciest loop request the adapter received, under the meter's heuristic. */
  readonly peakRequestTokens: number
  readonly thresholdTokens: number
}

interface Configuration {
  readonly loop: DshModules['kind']
  readonly engine: EngineChoice
  readonly engineLabel: string
  readonly keepTurns?: number
}

const CONTEXT_WINDOW = 2000
const THRESHOLD_RATIO = 0.8
const TURNS = 40

/** The two scenarios: the projection fits, and the projection itself exceeds the threshold. */
export const SCENARIOS = {
  'last 3 turns fit': { userChars: 120, replyChars: 800 },
  'last 3 turns exceed': { userChars: 120, replyChars: (turn: number) => (turn % 12 === 8 || turn % 12 === 9 ? 3000 : 400) },
} satisfies Record<string, Pick<LastTurnsOptions, 'userChars' | 'replyChars'>>

const BASIC: EngineChoice = { kind: 'basic', config: { thresholdRatio: THRESHOLD_RATIO } }
const AWARE: EngineChoice = { kind: 'projection-aware', config: { thresholdRatio: THRESHOLD_RATIO } }
const AWARE_SURFACE: EngineChoice = { kind: 'projection-aware', config: { thresholdRatio: THRESHOLD_RATIO, measure: 'surface' } }

const CONFIGURATIONS: Record<keyof typeof SCENARIOS, Configuration[]> = {
  'last 3 turns fit': [
    { loop: 'stock', engine: BASIC, engineLabel: 'compaction-basic' },
    { loop: 'patched', engine: BASIC, engineLabel: 'compaction-basic', keepTurns: 3 },
    { loop: 'patched', engine: AWARE, engineLabel: 'projection-aware', keepTurns: 3 },
    { loop: 'patched', engine: AWARE_SURFACE, engineLabel: 'projection-aware, measure: surface', keepTurns: 3 },
    { loop: 'patched', engine: AWARE, engineLabel: 'projection-aware' },
  ],
  'last 3 turns exceed': [
    { loop: 'patched', engine: BASIC, engineLabel: 'compaction-basic', keepTurns: 3 },
    { loop: 'patched', engine: AWARE, engineLabel: 'projection-aware', keepTurns: 3 },
  ],
}

/**
 * Run every configuration of both scenarios on real offline loops (2,000-token window, threshold ratio 0.8, 40
 * turns) and count compactions.
 * @returns one row per configuration.
 */
export async function compactionCounts(): Promise<CountsRow[]> {
  const modules = { patched: await patchedDsh(), stock: await stockDsh() }
  const runs = []
  for (const [scenario, sizes] of Object.entries(SCENARIOS) as [keyof typeof SCENARIOS, (typeof SCENARIOS)[keyof typeof SCENARIOS]][]) {
    for (const configuration of CONFIGURATIONS[scenario]) {
      const run = await runLastTurns({
        dsh: modules[configuration.loop],
        engine: configuration.engine,
        turns: TURNS,
        contextWindow: CONTEXT_WINDOW,
        ...sizes,
        ...configuration.keepTurns === undefined ? {} : { keepTurns: configuration.keepTurns },
      })
      runs.push({ scenario, configuration, run })
    }
  }
  const meter = runs.find(({ configuration }) => configuration.loop === 'patched')?.run.loop.ctx.tokenMeter as RequestPricer
  return runs.map(({ scenario, configuration, run }) => ({
    scenario,
    loop: configuration.loop,
    engine: configuration.engineLabel,
    listener: configuration.keepTurns === undefined ? 'none' : `last ${configuration.keepTurns} turns`,
    turns: TURNS,
    compactions: run.compactions,
    summarizations: run.summarizations,
    requests: run.requests.length,
    summarizedTokens: run.summarizedTokens,
    unsentCompacted: run.unsentCompacted,
    peakRequestTokens: Math.max(...run.requests.map(request => requestPrice(meter, request))),
    thresholdTokens: Math.floor(CONTEXT_WINDOW * THRESHOLD_RATIO),
  }))
}

/**
 * Format rows as a Markdown table.
 * @param rows - counts rows.
 * @returns the table text.
 */
export function countsTable(rows: readonly CountsRow[]): string {
  const header = ['scenario', 'loop', 'engine', 'agent/context listener', 'turns', 'compactions', 'summarization calls', 'tokens summarized', 'unsent nodes compacted', 'loop requests', 'peak request tokens', 'threshold']
  const lines = rows.map(row => [
    row.scenario, row.loop, row.engine, row.listener, row.turns, row.compactions, row.summarizations, row.summarizedTokens,
    row.listener === 'none' ? '-' : row.unsentCompacted, row.requests, row.peakRequestTokens, row.thresholdTokens,
  ].map(String))
  return [header, header.map(() => '---'), ...lines].map(cells => `| ${cells.join(' | ')} |`).join('\n')
}
