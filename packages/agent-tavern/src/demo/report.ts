/**
 * The demo's printed report and files: text tables of requests, sessions, probes and targets, a CSV of every
 * request, and the chart.
 * @module @dsh-context/agent-tavern/demo/report
 */

import { tokensChart } from './chart.ts'
import type { DemoReport, SessionReport } from './run.ts'

/**
 * Lay out rows as a left-aligned text table.
 * @param header - column titles.
 * @param rows - cells, one array per row.
 * @returns the lines, header and rule first.
 */
export function textTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string[] {
  const cells = [header, ...rows].map(row => row.map(String))
  const widths = header.map((_, i) => Math.max(...cells.map(row => (row[i] ?? '').length)))
  const line = (row: readonly string[]): string => row.map((cell, i) => cell.padEnd(widths[i] as number)).join('  ').trimEnd()
  return [line(cells[0] as string[]), widths.map(width => '-'.repeat(width)).join('  '), ...cells.slice(1).map(line)]
}

const count = (value: number): string => Math.round(value).toLocaleString('en-US')
const percent = (value: number): string => `${(value * 100).toFixed(1)}%`
const yesNo = (value: boolean): string => value ? 'yes' : 'no'

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
  const sessions = [report.native, report.managed]
  const row = (name: string, cell: (session: SessionReport) => string): string[] => [name, ...sessions.map(cell)]
  return textTable(['', ...sessions.map(session => session.mode)], [
    row('requests', s => count(s.rows.length)),
    row('peak request tokens', s => count(s.peak)),
    row('mean request tokens', s => count(s.mean)),
    row('prefix reuse', s => percent(s.prefixReuse)),
    row('compactions', s => count(s.compactions)),
    row('compaction model calls', s => count(s.auxiliary)),
    row('projected requests', s => count(s.projected)),
    row('rebuilt from the log', s => `${s.rows.filter(r => r.diff === undefined).length}/${s.rows.length}`),
    row('recall probes answered', s => `${s.probes.filter(p => p.searched && p.found && p.answered).length}/${s.probes.length}`),
    row('seconds', s => s.seconds.toFixed(1)),
  ])
}

/**
 * The recall probes of both modes.
 * @param report - both sessions.
 * @returns the table lines.
 */
export function probeTable(report: DemoReport): string[] {
  const rows = report.native.probes.map((probe, i) => {
    const managed = report.managed.probes[i]
    const judged = (p: typeof probe | undefined): string => p === undefined ? '-' : `${yesNo(p.searched)}/${yesNo(p.found)}/${yesNo(p.answered)}/${yesNo(p.inRequest)}`
    return [probe.turn, probe.plantTurn, JSON.stringify(probe.expect), judged(probe), judged(managed)]
  })
  return textTable(['turn', 'planted', 'expected', 'native searched/found/answered/in request', 'managed searched/found/answered/in request'], rows)
}

/**
 * Every request of both modes as CSV.
 * @param report - both sessions.
 * @returns the CSV text.
 */
export function requestsCsv(report: DemoReport): string {
  const lines = ['mode,request,turn,step,tokens,reused,sent,surface,rebuilt']
  for (const session of [report.native, report.managed]) {
    session.rows.forEach((row, i) => lines.push([session.mode, i + 1, row.turn, row.step, row.tokens, row.reused, row.sent, row.surface, row.diff === undefined].join(',')))
  }
  return `${lines.join('\n')}\n`
}

/**
 * The tokens-per-request chart of both modes.
 * @param report - both sessions.
 * @param turns - the story length, for the title.
 * @returns the SVG document.
 */
export function reportChart(report: DemoReport, turns: number): string {
  return tokensChart(`AgentTavern, ${turns}-turn roleplay: request tokens per request (DSH token meter)`, [
    { label: `dsh-native (peak ${count(report.native.peak)})`, color: '#c0392b', values: report.native.rows.map(row => row.tokens) },
    { label: `agent-managed (peak ${count(report.managed.peak)})`, color: '#2471a3', values: report.managed.rows.map(row => row.tokens) },
  ])
}
