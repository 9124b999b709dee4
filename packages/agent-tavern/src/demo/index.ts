/**
 * The AgentTavern demo: a long roleplay on an embedded deterministic model, run in both context modes on a real
 * DSH AgentLoop, with per-request token figures, prefix reuse, recall probes, replay verdicts and a chart.
 * @module @dsh-context/agent-tavern/demo
 */

export { tokensChart } from './chart.ts'
export type { Series } from './chart.ts'
export { prefixReuse, probeRows, requestRows, reusedPrefix } from './metrics.ts'
export type { ProbeRow, RequestRow } from './metrics.ts'
export { roleplayReply } from './model.ts'
export { judge, MIRA, runDemo, runSession } from './run.ts'
export type { DemoOptions, DemoReport, PluginRow, SessionReport, Target } from './run.ts'
export { OPENING_SCENE, story } from './story.ts'
export type { StoryOptions, StoryTurn } from './story.ts'
export { probeTable, reportChart, requestsCsv, requestTable, sessionTable, textTable } from './report.ts'
