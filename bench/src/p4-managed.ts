/**
 * P4: AgentTavern's `agent-managed` context mode against `dsh-native`, from the AgentTavern demo (the same scripted
 * roleplay in both modes on a real patched loop with projection-aware compaction), in English and in Chinese.
 * @module bench/p4-managed
 */

import type { DemoReport, SessionReport, StoryLanguage } from '@dsh-seam/agent-tavern-demo'
import { runDemo } from '@dsh-seam/agent-tavern-demo'
import type { Section } from './report.ts'
import { verdict } from './report.ts'

/** The demo's defaults (`examples/agent-tavern-demo/bin/demo.mjs`). */
const DEMO = { turns: 300, contextWindow: 90_000, seed: 7 }

/** `--quick`: the scale of the CI test (`test/tavern/demo.test.ts`), where the targets still apply. */
const QUICK = { turns: 200, contextWindow: 60_000, seed: 7, tavern: { policy: { blockTokens: 3_600 } } }

const LANGUAGES: readonly StoryLanguage[] = ['en', 'zh']

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`
const count = (value: number): string => value.toLocaleString('en-US')

function row(lang: StoryLanguage, session: SessionReport): string[] {
  const rebuilt = session.rows.filter(r => r.diff === undefined).length
  return [
    lang,
    session.mode,
    session.unavailable ?? `${session.rows.length}`,
    count(session.peak),
    count(session.providerPeak),
    count(Math.round(session.mean)),
    percent(session.prefixReuse),
    `${session.compactions}`,
    `${session.projected}`,
    `${session.probes.filter(p => p.searched && p.found && p.answered).length} / ${session.probes.length}`,
    `${rebuilt} / ${session.rows.length}`,
  ]
}

/**
 * @param quick - the CI scale: 200 turns on a 60,000-token window with blocks of 3,600 tokens.
 * @param log - progress sink.
 * @returns the P4 section and the English demo report (P5 reads its compaction counts).
 */
export async function benchManaged(quick: boolean, log: (line: string) => void): Promise<{ section: Section; report: DemoReport; options: typeof DEMO & { tavern?: Record<string, unknown> } }> {
  const options = quick ? QUICK : DEMO
  const reports = new Map<StoryLanguage, DemoReport>()
  for (const lang of LANGUAGES) {
    reports.set(lang, await runDemo({ ...options, lang, progress: (mode, turn) => { if (turn % 100 === 0) log(`P4 ${lang} ${mode}: turn ${turn}/${options.turns}`) } }))
  }
  const failed = LANGUAGES.flatMap(lang => reports.get(lang)!.targets.filter(target => !target.pass).map(target => `${lang}: ${target.name}: ${target.value}`))
  const summary = LANGUAGES.map(lang => {
    const { native, managed } = reports.get(lang)!
    return `${lang}: managed peak ${percent(managed.providerPeak / native.providerPeak)} of native (provider-reported), prefix reuse ${percent(managed.prefixReuse)}`
  }).join('; ')
  return {
    report: reports.get('en')!,
    options,
    section: {
      id: 'P4',
      title: 'Managed vs. native (AgentTavern, English and Chinese)',
      method: `\`runDemo\` from \`@dsh-seam/agent-tavern-demo\`: a ${options.turns}-turn scripted roleplay (seed ${options.seed}) `
        + `in English and in Chinese, run once per context mode on a real patched loop (DSH's invariants on, ${count(options.contextWindow)}-token `
        + 'window, projection-aware compaction). Request tokens are the DSH token meter\'s estimate (`priceRequest`) of every loop request '
        + 'the provider received; provider tokens are the prompt the scripted provider reported (a stand-in tokenizer, 0.75 token per CJK '
        + 'character), which both the managed budget and projection-aware compaction calibrate by; prefix reuse is the share of request '
        + 'tokens identical to the previous request\'s prefix.',
      target: 'the demo\'s targets in both languages: managed peak ≤ 15% of native (provider-reported), managed prefix reuse ≥ 90%, every recall probe answered from the log through the tools, every request rebuilt',
      verdict: verdict(failed.length === 0, failed.length === 0 ? summary : failed.join('; ')),
      table: {
        columns: ['language', 'mode', 'requests', 'peak request tokens', 'peak provider tokens', 'mean request tokens', 'prefix reuse', 'compactions', 'projected requests', 'recall probes', 'rebuilt from log'],
        rows: LANGUAGES.flatMap(lang => [row(lang, reports.get(lang)!.native), row(lang, reports.get(lang)!.managed)]),
      },
      notes: LANGUAGES.flatMap(lang => reports.get(lang)!.targets.map(target => `${lang}: ${target.pass ? 'PASS' : 'FAIL'} ${target.name}: ${target.value}`)),
    },
  }
}
