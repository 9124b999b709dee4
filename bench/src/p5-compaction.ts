/**
 * P5: how often compaction runs when an `agent/context` listener manages the context, with projection-aware
 * compaction against stock `dsh-compaction-basic`: the compaction package's last-turns scenarios, and AgentTavern's
 * managed mode (which refuses stock compaction).
 * @module bench/p5-compaction
 */

import type { DemoReport } from '@dsh-seam/agent-tavern-demo'
import { runSession } from '@dsh-seam/agent-tavern-demo'
import { patchedDsh } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'

/** The fields of `CountsRow` (packages/compaction-effective-projection/scenarios/counts.ts) this benchmark reads. */
interface CountsRow {
  readonly scenario: string
  readonly loop: string
  readonly engine: string
  readonly listener: string
  readonly turns: number
  readonly compactions: number
  readonly unsentCompacted: number
  readonly peakRequestTokens: number
  readonly thresholdTokens: number
}

/** The compaction package's scenario runner: TypeScript outside its `lib/`, loaded through Node's type stripping. */
const COUNTS = new URL('../../packages/compaction-effective-projection/scenarios/counts.ts', import.meta.url)

async function compactionCounts(): Promise<CountsRow[]> {
  const module = await import(COUNTS.href) as { compactionCounts?: () => Promise<CountsRow[]> }
  if (typeof module.compactionCounts !== 'function') throw new Error(`${COUNTS.pathname} no longer exports compactionCounts()`)
  return module.compactionCounts()
}

/**
 * @param demo - P4's report and options: the tavern's compaction counts per mode.
 * @param log - progress sink.
 * @returns the P5 section.
 */
export async function benchCompaction(demo: { report: DemoReport; options: { turns: number; contextWindow: number; seed: number } }, log: (line: string) => void): Promise<Section> {
  log('P5 compaction scenarios…')
  const counts = await compactionCounts()
  const dsh = await patchedDsh()
  const refused = await runSession('agent-managed', { ...demo.options, compaction: [dsh.compactionBasic.default, {}] })
  const rows = counts.map(row => [
    `${row.scenario} (${row.turns} turns)`,
    row.loop,
    row.listener,
    row.engine,
    `${row.compactions}`,
    row.listener === 'none' ? '-' : `${row.unsentCompacted}`,
    `${row.peakRequestTokens} / ${row.thresholdTokens}`,
  ])
  const { native, managed } = demo.report
  const tavern = `AgentTavern demo (${demo.options.turns} turns)`
  rows.push(
    [tavern, 'patched', 'dsh-native (none)', 'projection-aware', `${native.compactions}`, '-', `${native.peak} (window ${demo.options.contextWindow})`],
    [tavern, 'patched', 'agent-managed', 'projection-aware', `${managed.compactions}`, '0', `${managed.peak} (window ${demo.options.contextWindow})`],
    [tavern, 'patched', 'agent-managed', 'compaction-basic', `refused: ${refused.unavailable ?? 'ran'}`, '-', '-'],
  )
  const managedRuns = counts.filter(row => row.listener !== 'none' && row.loop === 'patched')
  const byScenario = [...new Set(managedRuns.map(row => row.scenario))].map(scenario => {
    const of = (engine: string): CountsRow | undefined => managedRuns.find(row => row.scenario === scenario && row.engine === engine)
    return { scenario, basic: of('compaction-basic'), aware: of('projection-aware') }
  })
  const fewer = byScenario.every(({ basic, aware }) => basic !== undefined && aware !== undefined && aware.compactions < basic.compactions && aware.unsentCompacted === 0)
  return {
    id: 'P5',
    title: 'Compactions: projection-aware vs. stock',
    method: '`compactionCounts()` from `packages/compaction-effective-projection/scenarios/counts.ts`: real offline loops, '
      + '2,000-token window, threshold ratio 0.8, an agent-scoped listener that sends the last 3 turns, replies sized so the '
      + 'projection fits the threshold or itself exceeds it; stock `dsh-compaction-basic` measures the whole surface, '
      + 'projection-aware compaction the request about to be sent. "Unsent nodes compacted" counts compacted nodes the '
      + 'listener had already left out of the request. The AgentTavern rows come from P4\'s run, plus `agent-managed` '
      + 'mounted over stock compaction, which AgentTavern refuses.',
    target: 'in managed mode (a listener selecting the context), fewer compactions with projection-aware compaction than with stock, none of them spent on nodes the request does not send',
    verdict: verdict(fewer, byScenario.map(({ scenario, basic, aware }) => `${scenario}: ${aware?.compactions ?? '?'} vs. ${basic?.compactions ?? '?'} compactions`).join('; ')),
    table: {
      columns: ['scenario', 'loop', 'listener / mode', 'compaction', 'compactions', 'unsent nodes compacted', 'peak request tokens / threshold'],
      rows,
    },
  }
}
