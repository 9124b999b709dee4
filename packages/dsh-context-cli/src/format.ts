/**
 * `dsh-context inspect` output: an aligned table for people, one JSON document for machines.
 * @module @dsh-context/cli/format
 */

import type { SessionLog } from '@dsh-context/agent-context'
import type { LogAnalysis, RequestSummary } from './analyze.ts'

/** Excluded runs shown per row of the table; `--json` lists them all. */
const SHOWN_RUNS = 4

function runs(excluded: readonly [number, number][]): string {
  if (excluded.length === 0) return '-'
  const shown = excluded.slice(0, SHOWN_RUNS).map(([first, last]) => first === last ? `${first}` : `${first}..${last}`)
  return excluded.length > SHOWN_RUNS ? `${shown.join(' ')} …(+${excluded.length - SHOWN_RUNS})` : shown.join(' ')
}

const COLUMNS: readonly [title: string, cell: (request: RequestSummary) => string, align: 'left' | 'right'][] = [
  ['turn', request => `${request.turn}`, 'right'],
  ['step', request => `${request.step}`, 'right'],
  ['seq', request => `${request.seq}`, 'right'],
  ['surface', request => `${request.surfaceNodes}`, 'right'],
  ['sent', request => `${request.includedNodes}`, 'right'],
  ['excluded runs', request => runs(request.excluded), 'left'],
  ['tokens', request => `${request.tokens}`, 'right'],
  ['surface tokens', request => `${request.surfaceTokens}`, 'right'],
  ['revision', request => request.revision ?? '-', 'left'],
]

/**
 * @param log - the log read.
 * @param analysis - its requests.
 * @returns a summary line and one aligned row per request.
 */
export function inspectTable(log: SessionLog, analysis: LogAnalysis): string {
  const projected = analysis.requests.filter(request => request.projectionSeq !== undefined).length
  const rows = [COLUMNS.map(([title]) => title), ...analysis.requests.map(request => COLUMNS.map(([, cell]) => cell(request)))]
  const widths = COLUMNS.map((_, c) => Math.max(...rows.map(row => (row[c] as string).length)))
  const lines = rows.map(row => row.map((text, c) => {
    const width = widths[c] as number
    return (COLUMNS[c] as (typeof COLUMNS)[number])[2] === 'right' ? text.padStart(width) : text.padEnd(width)
  }).join('  ').trimEnd())
  const head = `session ${log.header.id} (format v${log.header.version}): ${log.events.length} events, ${analysis.requests.length} requests, ${projected} projected`
  return `${head}\n${lines.join('\n')}\n`
}

/**
 * @param log - the log read.
 * @param analysis - its requests and first violation.
 * @returns `{ session, formatVersion, events, requests, violation? }` as one JSON document.
 */
export function inspectJson(log: SessionLog, analysis: LogAnalysis): string {
  return `${JSON.stringify({
    session: log.header.id,
    formatVersion: log.header.version,
    events: log.events.length,
    requests: analysis.requests,
    ...analysis.violation === undefined ? {} : { violation: analysis.violation },
  }, null, 2)}\n`
}
