/**
 * The demo's printed report and files: text tables of requests, sessions, probes and targets, a CSV of every
 * request, and the chart.
 * @module @dsh-seam/agent-tavern-demo/report
 */

import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import { tokensChart } from './chart.ts'
import type { LiveReport } from './live.ts'
import type { ProbeRow } from './metrics.ts'
import type { DemoReport, SessionReport } from './run.ts'

/**
 * Lay out rows as a left-aligned text table.
 * @param header - column titles.
 * @param rows - cells, one array per row.
 * @returns the lines, header and rule first.
 */
function textTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string[] {
  const cells = [header, ...rows].map(row => row.map(String))
  const widths = header.map((_, i) => Math.max(...cells.map(row => (row[i] ?? '').length)))
  const line = (row: readonly string[]): string => row.map((cell, i) => cell.padEnd(widths[i] as number)).join('  ').trimEnd()
  return [line(cells[0] as string[]), widths.map(width => '-'.repeat(width)).join('  '), ...cells.slice(1).map(line)]
}

const count = (value: number): string => Math.round(value).toLocaleString('en-US')
const percent = (value: number): string => `${(value * 100).toFixed(1)}%`
const yesNo = (value: boolean): string => value ? 'yes' : 'no'
const judged = (p: ProbeRow | undefined): string => p === undefined ? '-' : `${yesNo(p.searched)}/${yesNo(p.found)}/${yesNo(p.answered)}/${yesNo(p.inRequest)}`

/**
 * Sample the request table: the first request of every `every`-th turn and each mode's peak request.
 * @param report - both sessions.
 * @param every - the turn interval; 0 lists every request.
 * @returns the table lines.
 */
export function requestTable(report: DemoReport, every: number): string[] {
  const { native, managed } = report
  const peakAt = (session: SessionReport): number => session.rows.findIndex(row => row.tokens === session.peak)
  const peaks = new Set([peakAt(native), peakAt(managed)])
  const rows = native.rows.flatMap((row, i) => {
    const first = i === 0 || native.rows[i - 1]?.turn !== row.turn
    if (!(every === 0 || peaks.has(i) || (first && row.turn % every === 0))) return []
    const other = managed.rows[i]
    return [[
      i + 1, row.turn, row.step, count(row.tokens),
      other === undefined ? '-' : count(other.tokens),
      other === undefined ? '-' : `${other.sent}/${other.surface}`,
      other === undefined || i === 0 ? '-' : percent(other.reused / other.tokens),
      peaks.has(i) ? `peak ${[peakAt(native) === i ? 'native' : '', peakAt(managed) === i ? 'managed' : ''].filter(Boolean).join(', ')}` : '',
    ]]
  })
  return textTable(['request', 'turn', 'step', 'native tokens', 'managed tokens', 'managed sent/surface', 'managed reuse', 'note'], rows)
}

/**
 * The per-mode summary.
 * @param report - both sessions.
 * @returns the table lines.
 */
export function sessionTable(report: DemoReport): string[] {
  return sessionsTable([report.native, report.managed])
}

function sessionsTable(sessions: readonly SessionReport[], extra: readonly SessionRow[] = []): string[] {
  const row = ([name, cell]: SessionRow): string[] => [name, ...sessions.map(cell)]
  return textTable(['', ...sessions.map(session => session.mode)], [...[
    ['requests', s => count(s.rows.length)],
    ['peak request tokens', s => count(s.peak)],
    ['peak provider-reported prompt', s => count(s.providerPeak)],
    ['mean request tokens', s => count(s.mean)],
    ['prefix reuse', s => percent(s.prefixReuse)],
    ['compactions', s => count(s.compactions)],
    ['compaction model calls', s => count(s.auxiliary)],
    ['projected requests', s => count(s.projected)],
    ['rebuilt from the log', s => `${s.rows.filter(r => r.diff === undefined).length}/${s.rows.length}`],
    ['recall probes answered', s => `${s.probes.filter(p => p.searched && p.found && p.answered).length}/${s.probes.length}`],
    ['seconds', s => s.seconds.toFixed(1)],
  ] satisfies SessionRow[], ...extra].map(row))
}

/** A summary row: its name and its cell for one session. */
type SessionRow = readonly [name: string, cell: (session: SessionReport) => string]

/**
 * The recall probes of both modes.
 * @param report - both sessions.
 * @returns the table lines.
 */
export function probeTable(report: DemoReport): string[] {
  const rows = report.native.probes.map((probe, i) => [probe.turn, probe.plantTurn, JSON.stringify(probe.expect), judged(probe), judged(report.managed.probes[i])])
  return textTable(['turn', 'planted', 'expected', 'native searched/found/answered/in request', 'managed searched/found/answered/in request'], rows)
}

/**
 * Every request of both modes as CSV.
 * @param report - both sessions.
 * @returns the CSV text.
 */
export function requestsCsv(report: DemoReport): string {
  const lines = ['mode,request,turn,step,tokens,provider_tokens,reused,sent,surface,rebuilt']
  for (const session of [report.native, report.managed]) {
    session.rows.forEach((row, i) => lines.push([session.mode, i + 1, row.turn, row.step, row.tokens, row.provider ?? '', row.reused, row.sent, row.surface, row.diff === undefined].join(',')))
  }
  return `${lines.join('\n')}\n`
}

/**
 * The tokens-per-request chart of both modes: the DSH meter's estimate and the prompt the provider reported.
 * @param report - both sessions.
 * @param turns - the story length, for the title.
 * @returns the SVG document.
 */
export function reportChart(report: DemoReport, turns: number): string {
  const { native, managed } = report
  const provider = (session: SessionReport): number[] => session.rows.map(row => row.provider ?? 0)
  return tokensChart(`AgentTavern, ${turns}-turn roleplay: request tokens, estimated (DSH token meter) and provider-reported`, [
    { label: `dsh-native, estimated (peak ${count(native.peak)})`, color: '#c0392b', values: native.rows.map(row => row.tokens) },
    { label: `dsh-native, provider-reported (peak ${count(native.providerPeak)})`, color: '#e59866', dashed: true, values: provider(native) },
    { label: `agent-managed, estimated (peak ${count(managed.peak)})`, color: '#2471a3', values: managed.rows.map(row => row.tokens) },
    { label: `agent-managed, provider-reported (peak ${count(managed.providerPeak)})`, color: '#7fb3d5', dashed: true, values: provider(managed) },
  ])
}

/**
 * Every request of the live session: DSH token-meter tokens, projection, prefix reuse, the provider's usage
 * (input including cache hits, cache hits, output) and the replay verdict.
 * @param report - the live session.
 * @returns the table lines.
 */
export function liveRequestTable(report: LiveReport): string[] {
  const rows = report.session.rows.map((row, i) => {
    const usage = report.usage[i]
    return [
      i + 1, row.turn, row.step, count(row.tokens), `${row.sent}/${row.surface}`, i === 0 ? '-' : percent(row.reused / row.tokens),
      usage === undefined ? '-' : count(usage.inputTokens + (usage.cacheReadTokens ?? 0)),
      usage?.cacheReadTokens === undefined ? '-' : count(usage.cacheReadTokens),
      usage === undefined ? '-' : count(usage.outputTokens),
      row.diff === undefined ? 'yes' : `no: ${row.diff}`,
    ]
  })
  return textTable(['request', 'turn', 'step', 'tokens (meter)', 'sent/surface', 'reuse', 'provider input', 'cache hit', 'output', 'rebuilt from the log'], rows)
}

/**
 * The live session's summary, with the provider's token totals.
 * @param report - the live session.
 * @returns the table lines.
 */
export function liveSessionTable(report: LiveReport): string[] {
  const total = (pick: (usage: TokenUsage) => number): string => count(report.usage.reduce((sum, usage) => sum + (usage === undefined ? 0 : pick(usage)), 0))
  return sessionsTable([report.session], [
    ['provider input tokens', () => total(usage => usage.inputTokens + (usage.cacheReadTokens ?? 0))],
    ['provider cache hits', () => total(usage => usage.cacheReadTokens ?? 0)],
    ['provider output tokens', () => total(usage => usage.outputTokens)],
    ['agent errors', s => s.errors.length === 0 ? '0' : s.errors.join('; ')],
  ])
}

/**
 * The live session's recall probes, each followed by the model's final reply.
 * @param report - the live session.
 * @returns the table lines, then one `turn N reply: …` line per probe.
 */
export function liveProbeTable(report: LiveReport): string[] {
  const { probes } = report.session
  const rows = probes.map(probe => [probe.turn, probe.plantTurn, JSON.stringify(probe.expect), judged(probe)])
  return [
    ...textTable(['turn', 'planted', 'expected', 'searched/found/answered/in request'], rows),
    ...probes.map(probe => `turn ${probe.turn} reply: ${probe.reply === '' ? '(none)' : JSON.stringify(probe.reply)}`),
  ]
}
