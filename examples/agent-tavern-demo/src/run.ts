/**
 * Run the demo story on a real DSH AgentLoop (offline, scripted model) in one context mode, or in both, and judge the
 * targets: managed peak request tokens at most 15% of native's, prefix reuse of at least 90%, every recall probe
 * answered from the log through `tavern_history_search`, every request rebuilt from the log.
 * @module @dsh-seam/agent-tavern-demo/run
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { isAgentLoopRequest } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { replayRequests } from '@dsh-seam/agent-context'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import type { DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import type { ContextMode, LoreEntry } from '@dsh-seam/agent-tavern'
import { AgentTavern, AgentTavernError, contextModeRefusal, TAVERN_REFERENCE_HINT } from '@dsh-seam/agent-tavern'
import type { RequestPricer } from '@dsh-seam/compaction-effective-projection'
import type { ProbeRow, RequestRow } from './metrics.ts'
import { prefixReuse, probeRows, requestRows, withProviderTokens } from './metrics.ts'
import { roleplayReply } from './model.ts'
import type { StoryLanguage, StoryTurn } from './story.ts'
import { openingScene, story } from './story.ts'

/** A plugin and its config, as `ctx.plugin` takes them. */
export type PluginRow = [plugin: unknown, config?: unknown]

/** How the demo runs. */
export interface DemoOptions {
  readonly turns: number
  /** The scripted route's context window. */
  readonly contextWindow: number
  readonly seed?: number
  /** The story's language (default `en`): character, scene, lore, user turns and replies. */
  readonly lang?: StoryLanguage
  /**
   * The compaction engine mounted in both modes. Default: {@link demoCompaction} of the mode.
   */
  readonly compaction?: PluginRow
  /** AgentTavern config fields merged over the demo's character and scene (e.g. `policy`). */
  readonly tavern?: Record<string, unknown>
  /** The DSH module set; the patched workspace set by default. */
  readonly dsh?: DshModules
  /** Called after every turn. */
  readonly progress?: (mode: ContextMode, turn: number) => void
  /** Persist each session as JSONL under this directory (`SessionReport.log`). */
  readonly persistRoot?: string
}

/** One mode's measurements. */
export interface SessionReport {
  readonly mode: ContextMode
  /** Set when the mode could not be enabled on this host; nothing else was measured. */
  readonly unavailable?: string
  readonly rows: readonly RequestRow[]
  readonly peak: number
  /** The largest prompt the provider reported (0 without usage). */
  readonly providerPeak: number
  readonly mean: number
  readonly prefixReuse: number
  /** `compaction/summary` events in the log. */
  readonly compactions: number
  /** Requests the provider received that were not loop requests (compaction summaries). */
  readonly auxiliary: number
  readonly probes: readonly ProbeRow[]
  /** Requests whose `request/projection` selected less than the surface. */
  readonly projected: number
  /** `agent/error` reports. */
  readonly errors: readonly string[]
  readonly seconds: number
  /** The persisted session log, with `persistRoot`. */
  readonly log?: string
}

/** One printed target. */
interface Target {
  readonly name: string
  readonly value: string
  readonly pass: boolean
}

/** Both modes and the targets. */
export interface DemoReport {
  readonly native: SessionReport
  readonly managed: SessionReport
  readonly targets: readonly Target[]
}

/** The character the demo's agent plays. */
export const MIRA = {
  name: 'Mira Vell',
  identity: 'You are the ferrywoman of the Grey Estuary: weathered, dry-humoured, slow to trust and impossible to hurry. You speak plainly and remember everything your passengers tell you.',
} as const

/** The character in Chinese. */
const MIRA_ZH = {
  name: '米拉·维尔',
  identity: '你是灰色河口的摆渡女：饱经风霜，说话干涩幽默，不轻易信任别人，也从不慌忙。你说话直白，记得乘客告诉你的每一件事。',
} as const

/**
 * The character card's world info in each language. None of it holds a probed fact, and its keywords are names the
 * story mentions now and then (a plant, a probe, a scene change), so an entry shows while they are recent.
 */
const LORE: Record<StoryLanguage, readonly LoreEntry[]> = {
  en: [
    { name: 'The lighthouse', keywords: ['lighthouse'], text: 'Dark for eleven years since its keeper drowned; its cellar is locked and the key was thought lost.' },
    { name: 'The salt mill', keywords: ['salt mill'], text: 'A ruined tide mill on the marsh edge; folk say lights move there on winter nights.' },
    { name: 'Hallow Staithe', keywords: ['Hallow Staithe'], text: 'The fishing village on the north shore, ruled by a reeve who taxes every catch.' },
    { name: 'The reed maze', keywords: ['reed maze'], text: 'Channels through the eastern reeds that shift with every spring tide; only Mira poles them without a guide.' },
  ],
  zh: [
    { name: '灯塔', keywords: ['灯塔'], text: '守塔人溺水之后已经熄灭了十一年；它的地窖一直锁着，人们以为钥匙早就丢了。' },
    { name: '盐磨坊', keywords: ['盐磨坊'], text: '沼泽边一座废弃的潮汐磨坊；人们说冬夜里那儿有灯光移动。' },
    { name: '霍洛斯泰斯', keywords: ['霍洛斯泰斯'], text: '北岸的渔村，由一位对每一网渔获都要抽税的地方官管辖。' },
    { name: '芦苇迷宫', keywords: ['芦苇迷宫'], text: '东岸芦苇丛中的水道，每逢春潮就会改道；只有米拉不用向导就能撑船穿过。' },
  ],
}

/** The demo's context window (`npm run tavern` without `--context-window`). */
export const DEMO_CONTEXT_WINDOW = 90_000

/** The demo's policy: the default shares, and blocks of 4,000 tokens for fewer prefix changes on its 90,000-token window. */
const DEMO_POLICY = { blockTokens: 4000 } as const

/**
 * The demo's AgentTavern config in a language.
 * @param lang - the story's language.
 * @returns the character, its opening scene, its lore and the policy.
 */
export function tavernConfig(lang: StoryLanguage): Record<string, unknown> {
  return { character: lang === 'zh' ? MIRA_ZH : MIRA, scene: openingScene(lang), lore: { entries: LORE[lang] }, policy: DEMO_POLICY }
}

const empty = (mode: ContextMode, unavailable: string, seconds: number): SessionReport => ({
  mode, unavailable, rows: [], peak: 0, providerPeak: 0, mean: 0, prefixReuse: 0, compactions: 0, auxiliary: 0, probes: [], projected: 0, errors: [], seconds,
})

/**
 * The compaction engine the demo mounts by default: projection-aware, measuring the projection. `dsh-native` gets DSH's
 * model summaries (a session without an `agent/context` listener compacts exactly like `dsh-compaction-basic`);
 * `agent-managed` makes no hidden model call, so a compacted span is replaced by a reference to the history tools.
 * @param mode - the session's context mode.
 * @returns the plugin row.
 */
export function demoCompaction(mode: ContextMode): PluginRow {
  return [ProjectionAwareCompactionEngine, mode === 'dsh-native' ? { measure: 'projection' } : { measure: 'projection', summary: 'reference', referenceHint: TAVERN_REFERENCE_HINT }]
}

/**
 * Mount AgentTavern on an agent as the demo's character.
 * @param agent - the agent.
 * @param mode - the fresh session's context mode.
 * @param tavern - config fields merged over the English character, opening scene and lore.
 * @returns AgentTavern's refusal message when the host cannot run `mode` (the session then runs `dsh-native`), else
 *   undefined.
 * @throws whatever else the mount throws.
 */
export async function mountTavern(agent: Agent, mode: ContextMode, tavern: Record<string, unknown> = {}): Promise<string | undefined> {
  try {
    await agent.ctx.plugin(AgentTavern, { ...tavernConfig('en'), contextMode: mode, ...tavern } as never)
    return contextModeRefusal(agent)?.reason
  } catch (error: unknown) {
    if (error instanceof AgentTavernError) return error.message
    throw error
  }
}

/** What a played session is measured from. */
export interface PlayedSession {
  readonly mode: ContextMode
  readonly meter: RequestPricer
  readonly script: readonly StoryTurn[]
  readonly events: readonly SessionEvent[]
  /** Every request the provider received, loop requests and auxiliary ones (compaction summaries), in order. */
  readonly requests: readonly GenerateOptions[]
  readonly errors: readonly { readonly error: unknown }[]
  /** `performance.now()` when the session started. */
  readonly started: number
}

/**
 * Measure a played session: per-request tokens and replay verdicts, peak, mean, prefix reuse, compactions, probes.
 * @param played - the session's log, requests and errors.
 * @returns the measurements.
 */
export function measureSession(played: PlayedSession): SessionReport {
  const { events } = played
  const replayed = replayRequests(events)
  const sent = played.requests.filter(request => isAgentLoopRequest(request))
  const rows = withProviderTokens(events, requestRows(played.meter, sent, replayed))
  const tokens = rows.map(row => row.tokens)
  return {
    mode: played.mode,
    rows,
    peak: Math.max(0, ...tokens),
    providerPeak: Math.max(0, ...rows.map(row => row.provider ?? 0)),
    mean: tokens.length === 0 ? 0 : tokens.reduce((a, b) => a + b, 0) / tokens.length,
    prefixReuse: prefixReuse(rows),
    compactions: events.filter(event => event.type === 'compaction/summary').length,
    auxiliary: played.requests.length - sent.length,
    probes: probeRows(played.script, events, replayed),
    projected: replayed.filter(request => request.projection !== undefined).length,
    errors: played.errors.map(({ error }) => error instanceof Error ? error.message : String(error)),
    seconds: (performance.now() - played.started) / 1000,
  }
}

/**
 * Run the story in one mode.
 * @param mode - the session's context mode.
 * @param options - story length, context window, compaction engine and overrides.
 * @returns the measurements; `unavailable` when AgentTavern refused the mode.
 */
export async function runSession(mode: ContextMode, options: DemoOptions): Promise<SessionReport> {
  const started = performance.now()
  const dsh = options.dsh ?? await patchedDsh()
  const lang = options.lang ?? 'en'
  const script = story({ turns: options.turns, lang, ...options.seed === undefined ? {} : { seed: options.seed } })
  const loop = await bootLoop(dsh, {
    contextWindow: options.contextWindow,
    fallback: roleplayReply,
    plugins: [options.compaction ?? demoCompaction(mode)],
    ...options.persistRoot === undefined ? {} : { persistRoot: options.persistRoot },
  })
  const agent = loop.create(`agent-tavern-${mode}`)
  const unavailable = await mountTavern(agent, mode, { ...tavernConfig(lang), ...options.tavern })
  if (unavailable !== undefined) return empty(mode, unavailable, (performance.now() - started) / 1000)
  for (const [i, turn] of script.entries()) {
    await loop.say(agent, turn.text)
    options.progress?.(mode, i + 1)
  }
  const report = measureSession({ mode, meter: loop.ctx.tokenMeter, script, events: agent.session.events, requests: loop.adapter.requests, errors: loop.errors, started })
  if (options.persistRoot === undefined) return report
  await loop.ctx.sessions.flush(agent.session)
  return { ...report, log: sessionLogPath(loop, agent) }
}

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`

/**
 * Judge both modes against the demo's targets. The peak ratio compares the prompts the provider reported when it
 * reported every request (what the provider reads and bills; the meter under-prices CJK text), else the meter's
 * estimates; the value shows both.
 * @param native - the `dsh-native` session.
 * @param managed - the `agent-managed` session.
 * @returns the targets in print order.
 */
function judge(native: SessionReport, managed: SessionReport): Target[] {
  const sessions = [native, managed]
  const rows = sessions.flatMap(session => session.rows)
  const reported = rows.length > 0 && rows.every(row => row.provider !== undefined)
  const estimated = `estimated ${managed.peak} / ${native.peak} = ${percent(native.peak === 0 ? Infinity : managed.peak / native.peak)}`
  const [mine, theirs] = reported ? [managed.providerPeak, native.providerPeak] : [managed.peak, native.peak]
  const ratio = theirs === 0 ? Infinity : mine / theirs
  const probes = sessions.flatMap(session => session.probes)
  const rebuilt = rows.filter(row => row.diff === undefined).length
  const ran = sessions.every(session => session.unavailable === undefined && session.errors.length === 0)
  return [
    { name: 'both modes ran without agent errors', value: sessions.map(s => `${s.mode}: ${s.unavailable ?? `${s.errors.length} errors`}`).join('; '), pass: ran },
    {
      name: 'managed peak request tokens <= 15% of native peak',
      value: reported ? `provider-reported ${mine} / ${theirs} = ${percent(ratio)} (${estimated})` : estimated,
      pass: ran && ratio <= 0.15,
    },
    { name: 'managed prefix reuse >= 90% of request tokens', value: percent(managed.prefixReuse), pass: ran && managed.prefixReuse >= 0.9 },
    {
      name: 'every recall probe answered from the log via tavern_history_search',
      value: `${probes.filter(p => p.searched && p.found && p.answered).length} / ${probes.length}`,
      pass: ran && probes.length > 0 && probes.every(p => p.searched && p.found && p.answered),
    },
    { name: 'every request rebuilt from the log', value: `${rebuilt} / ${rows.length}`, pass: ran && rows.length > 0 && rebuilt === rows.length },
  ]
}

/**
 * Run the story in both modes and judge it.
 * @param options - story length, context window, compaction engine and overrides.
 * @returns both sessions and the targets.
 */
export async function runDemo(options: DemoOptions): Promise<DemoReport> {
  const native = await runSession('dsh-native', options)
  const managed = await runSession('agent-managed', options)
  return { native, managed, targets: judge(native, managed) }
}
