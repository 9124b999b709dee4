/**
 * P4: AgentTavern's `agent-managed` context mode against `dsh-native`, from the AgentTavern demo (the same scripted
 * roleplay in both modes on a real patched loop with projection-aware compaction).
 * @module bench/p4-managed
 */

import type { DemoReport, SessionReport } from '@dsh-context/agent-tavern-demo'
import { runDemo } from '@dsh-context/agent-tavern-demo'
import type { Section } from './report.ts'
import { verdict } from './report.ts'

/** The demo's defaults (`packages/agent-tavern/bin/demo.mjs`). */
const DEMO = { turns: 300, contextWindow: 90_000, seed: 7 }

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`

function row(session: SessionReport): string[] {
  const rebuilt = session.rows.filter(r => r.diff === undefined).length
  return [
    session.mode,
    session.unavailable ?? `${session.rows.length}`,
    session.peak.toLocaleString('en-US'),
    Math.round(session.mean).toLocaleString('en-US'),
    percent(session.prefixReuse),
    `${session.compactions}`,
    `${session.projected}`,
    `${rebuilt} / ${session.rows.length}`,
  ]
}

/**
 * @param quick - a 60-turn story.
 * @param log - progress sink.
 * @returns the P4 section and the demo report (P5 reads its compaction counts).
 */
export async function benchManaged(quick: boolean, log: (line: string) => void): Promise<{ section: Section; report: DemoReport; options: typeof DEMO }> {
  const options = quick ? { ...DEMO, turns: 60 } : DEMO
  const report = await runDemo({ ...options, progress: (mode, turn) => { if (turn % 100 === 0) log(`P4 ${mode}: turn ${turn}/${options.turns}`) } })
  const failed = report.targets.filter(target => !target.pass)
  return {
    report,
    options,
    section: {
      id: 'P4',
      title: 'Managed vs. native (AgentTavern)',
      method: `\`runDemo\` from \`@dsh-context/agent-tavern/demo\`: a ${options.turns}-turn scripted roleplay (seed ${options.seed}) `
        + `run once per context mode on a real patched loop (DSH's invariants on, ${options.contextWindow.toLocaleString('en-US')}-token `
        + 'window, projection-aware compaction). Request tokens are the DSH token meter\'s estimate of every loop request the '
        + 'provider received; prefix reuse is the share of request tokens identical to the previous request\'s prefix.',
      target: 'the demo\'s targets: managed peak request tokens ≤ 15% of native, managed prefix reuse ≥ 90%, every recall probe answered from the log, every request rebuilt',
      verdict: verdict(failed.length === 0, failed.length === 0
        ? `managed peak ${percent(report.managed.peak / report.native.peak)} of native, prefix reuse ${percent(report.managed.prefixReuse)}`
        : failed.map(target => `${target.name}: ${target.value}`).join('; ')),
      table: {
        columns: ['mode', 'requests', 'peak request tokens', 'mean request tokens', 'prefix reuse', 'compactions', 'projected requests', 'rebuilt from log'],
        rows: [row(report.native), row(report.managed)],
      },
      notes: report.targets.map(target => `${target.pass ? 'PASS' : 'FAIL'} ${target.name}: ${target.value}`),
    },
  }
}
