/**
 * The AgentTavern demo: a long roleplay (English or Chinese) on an embedded deterministic model, run in both context modes on a real
 * DSH AgentLoop, with per-request token figures, prefix reuse, recall probes, replay verdicts and a chart; or, with
 * `DEEPSEEK_API_KEY` set, a short agent-managed session on the real DeepSeek provider.
 * @module @dsh-context/agent-tavern-demo
 */

export { tokensChart } from './chart.ts'
export type { Series } from './chart.ts'
export { bootLiveLoop, demoModel, LIVE_DEFAULTS, LIVE_KEY_ENV, LIVE_PROVIDER, liveAdapterConfig, runLive } from './live.ts'
export type { DemoModel, Environment, LiveLoop, LiveOptions, LiveReport, LiveRoute } from './live.ts'
export { prefixReuse, probeRows, providerUsage, requestRows, reusedPrefix, withProviderTokens } from './metrics.ts'
export type { ProbeRow, RequestRow } from './metrics.ts'
export { providerTokens, roleplayReply } from './model.ts'
export { DEMO_COMPACTION, judge, measureSession, MIRA, mountTavern, runDemo, runSession, tavernConfig } from './run.ts'
export type { DemoOptions, DemoReport, PlayedSession, PluginRow, SessionReport, Target } from './run.ts'
export { OPENING_SCENE, openingScene, shortStory, story } from './story.ts'
export type { StoryLanguage, StoryOptions, StoryTurn } from './story.ts'
export { liveProbeTable, liveRequestTable, liveSessionTable, probeTable, reportChart, requestsCsv, requestTable, sessionTable, textTable } from './report.ts'
