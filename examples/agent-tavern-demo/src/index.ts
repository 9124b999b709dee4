/**
 * The AgentTavern demo: a long roleplay (English or Chinese) on an embedded deterministic model, run in both context modes on a real
 * DSH AgentLoop, with per-request token figures, prefix reuse, recall probes, replay verdicts and a chart; or, with
 * `DEEPSEEK_API_KEY` set, a short agent-managed session on the real DeepSeek provider.
 * @module @dsh-seam/agent-tavern-demo
 */

export { bootLiveLoop, demoModel, LIVE_DEFAULTS, LIVE_KEY_ENV, LIVE_PROVIDER, runLive } from './live.ts'
export type { LiveReport } from './live.ts'
export { roleplayReply } from './model.ts'
export { DEMO_CONTEXT_WINDOW, demoCompaction, MIRA, mountTavern, runDemo, runSession, tavernConfig } from './run.ts'
export type { DemoReport, SessionReport } from './run.ts'
export { OPENING_SCENE, story } from './story.ts'
export type { StoryLanguage } from './story.ts'
export { liveProbeTable, liveRequestTable, liveSessionTable, probeTable, reportChart, requestsCsv, requestTable, sessionTable } from './report.ts'
