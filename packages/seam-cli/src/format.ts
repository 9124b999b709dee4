/**
 * `dsh-seam` output: an aligned table for people, JSON documents for machines, one-line messages. Every string
 * taken from a log (or a path) is escaped before it reaches a terminal.
 * @module @dsh-seam/cli/format
 */

import type { SessionHeader } from '@deepseek-ai/dsh-session'
import type { LogAnalysis, LogViolation, RequestSummary } from './analyze.ts'
import type { ReportModel } from './report.ts'
import { PAGE_ROWS } from './report-html.ts'
import type { PolicyFigures, Simulation } from './simulate.ts'

/**
 * Characters a terminal or a line-based reader would act on: C0 and C1 controls (newlines, ESC and CSI of ANSI
 * sequences), DEL, line and paragraph separators, bidirectional overrides that reorder what is shown; and the
 * backslash, so that an escape in the output always stands for one character of the input.
 */
// oxlint-disable-next-line no-control-regex -- these are the characters escaped
const UNSAFE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF\\]/g
/** What `JSON.stringify` leaves raw of {@link UNSAFE}: it escapes C0 controls, quotes and backslashes itself. */
const UNSAFE_IN_JSON = /[\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/g
const SHORT: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' }

function escapeChar(char: string): string {
  return SHORT[char] ?? `\\u${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`
}

/**
 * @param text - text from a log, a path or an error.
 * @returns the text on one line with nothing a terminal acts on: backslash, `\n`, `\r`, `\t` and `\uXXXX` escapes;
 * lone surrogates are escaped too.
 */
export function printable(text: string): string {
  return text.replace(UNSAFE, escapeChar).replace(/\p{Surrogate}/gu, escapeChar)
}

/**
 * @param value - a JSON-serializable document.
 * @returns its JSON with the characters `JSON.stringify` leaves raw but a terminal acts on (C1 controls, DEL,
 * separators, bidirectional overrides) as `\uXXXX` escapes: still the same JSON value.
 */
export function safeJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(UNSAFE_IN_JSON, escapeChar)}\n`
}

/** What the command keeps of a log it read: its header, how many events, and which line holds each. */
export interface ReadLog {
  readonly header: SessionHeader
  readonly events: number
  lineOf(seq: number): number
}

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
  ['revision', request => request.revision === undefined ? '-' : printable(request.revision), 'left'],
]

/**
 * @param log - the log read.
 * @param analysis - its requests.
 * @returns a summary line and one aligned row per request.
 */
export function inspectTable(log: ReadLog, analysis: LogAnalysis): string {
  const projected = analysis.requests.filter(request => request.projectionSeq !== undefined).length
  const rows = [COLUMNS.map(([title]) => title), ...analysis.requests.map(request => COLUMNS.map(([, cell]) => cell(request)))]
  const head = `session ${printable(String(log.header.id))} (format v${log.header.version}): ${log.events} events, ${analysis.requests.length} requests, ${projected} projected`
  return `${head}\n${aligned(rows, COLUMNS.map(([, , align]) => align)).join('\n')}\n`
}

/**
 * @param rows - a title row, then data rows of already printable cells.
 * @param align - each column's alignment.
 * @returns one line per row, columns padded to their widest cell, two spaces apart.
 */
function aligned(rows: readonly (readonly string[])[], align: readonly ('left' | 'right')[]): string[] {
  const widths = align.map((_, c) => rows.reduce((width, row) => Math.max(width, (row[c] ?? '').length), 0))
  return rows.map(row => row.map((text, c) => {
    const width = widths[c] as number
    return align[c] === 'right' ? text.padStart(width) : text.padEnd(width)
  }).join('  ').trimEnd())
}

/** A violation with the line of the file that holds its event. */
type LocatedViolation = LogViolation & { readonly line: number }

/**
 * @param log - the log read.
 * @param analysis - its requests and first violation.
 * @returns `{ session, formatVersion, events, requests, violation? }` as one JSON document.
 */
export function inspectJson(log: ReadLog, analysis: LogAnalysis): string {
  return safeJson({
    session: log.header.id,
    formatVersion: log.header.version,
    events: log.events,
    requests: analysis.requests,
    ...analysis.violation === undefined ? {} : { violation: located(log, analysis.violation) },
  })
}

/**
 * @param path - the file verified.
 * @param log - the log read.
 * @param analysis - its requests and first violation.
 * @returns `{ file, session, events, requests, projected, ok, violation? }` as one JSON document.
 */
export function verifyJson(path: string, log: ReadLog, analysis: LogAnalysis): string {
  return safeJson({
    file: path,
    session: log.header.id,
    events: log.events,
    requests: analysis.requests.length,
    projected: analysis.requests.filter(request => request.projectionSeq !== undefined).length,
    ok: analysis.violation === undefined,
    ...analysis.violation === undefined ? {} : { violation: located(log, analysis.violation) },
    warnings: analysis.requests.flatMap(request => request.policy === undefined ? [] : [{
      ...request.policy,
      seq: request.projectionSeq,
      line: log.lineOf(request.projectionSeq ?? request.seq),
      turn: request.turn,
      step: request.step,
      ...request.revision === undefined ? {} : { revision: request.revision },
    }]),
  })
}

/**
 * @param path - the file.
 * @param log - the log read.
 * @param request - a request whose projection misses today's host policy.
 * @returns one warning line: file, line, seq, turn, step, revision, code and what it left out, escaped.
 */
export function policyWarning(path: string, log: ReadLog, request: RequestSummary): string {
  const { policy, revision, turn, step } = request
  const seq = request.projectionSeq ?? request.seq
  const where = `seq ${seq}, turn ${turn} step ${step}, ${revision === undefined ? 'no revision' : `revision "${revision}"`}`
  return printable(`verify: warning: ${path}:${log.lineOf(seq)}: ${where}: [${policy?.code}] request/projection ${policy?.detail}; today's host would not write this projection (the log was written under an earlier rule)`) + '\n'
}

function located(log: ReadLog, violation: LogViolation): LocatedViolation {
  return { ...violation, line: log.lineOf(violation.seq) }
}

/**
 * @param command - `inspect` or `verify`.
 * @param path - the file.
 * @param log - the log read.
 * @param violation - its first violation.
 * @returns one line: file, line, seq, turn, step, revision, code and what is wrong, escaped.
 */
export function violationLine(command: string, path: string, log: ReadLog, violation: LogViolation): string {
  const { code, seq, turn, step, revision, message } = violation
  const where = `seq ${seq}, turn ${turn} step ${step}, ${revision === undefined ? 'no revision' : `revision "${revision}"`}`
  return `dsh-seam ${command}: ${printable(`${path} line ${log.lineOf(seq)} (${where}): [${code}] ${message}`)}\n`
}

/**
 * @param output - the page written.
 * @param model - the report's model.
 * @param bytes - the page's size.
 * @returns one line: where the page is and what it maps.
 */
export function reportLine(output: string, model: ReportModel, bytes: number): string {
  const pages = Math.max(1, Math.ceil(model.requests.length / PAGE_ROWS))
  return `wrote ${printable(output)}: ${model.requests.length} requests × ${model.nodes.length} surface nodes, ${pages} map page${pages === 1 ? '' : 's'} of ${PAGE_ROWS} requests, ${(bytes / 1024).toFixed(0)} KiB\n`
}

/**
 * @param output - the page written.
 * @param model - the report's model.
 * @param analysis - the log's requests and first violation.
 * @param log - the log read.
 * @returns `{ file, output, session, events, nodes, compactions, unreadableCounts, requests, violation? }`: every request's figures as
 * the page shows them, without its map cells.
 */
export function reportJson(output: string, model: ReportModel, analysis: LogAnalysis, log: ReadLog): string {
  return safeJson({
    file: model.file,
    output,
    session: model.session,
    events: model.events,
    nodes: model.nodes.length,
    compactions: model.compactions,
    unreadableCounts: model.unreadableCounts,
    requests: model.requests.map(({ cells: _, ...figures }) => figures),
    ...analysis.violation === undefined ? {} : { violation: located(log, analysis.violation) },
  })
}

const percentText = (share: number): string => `${(share * 100).toFixed(1)}%`
const count = (value: number): string => value.toLocaleString('en-US')

const signed = (value: number, text: string): string => `${value > 0 ? '+' : value < 0 ? '−' : '±'}${text}`

/** A policy's figure beside the recorded one: `+1,234 (+5.0%)`. */
function delta(value: number, recorded: number): string {
  const change = value - recorded
  return `${signed(change, count(Math.abs(change)))}${recorded === 0 ? '' : ` (${signed(change, percentText(Math.abs(change) / recorded))})`}`
}

/** Probes passed of those that apply. */
function passed(results: readonly (boolean | undefined)[]): string {
  const judged = results.filter(result => result !== undefined)
  return judged.length === 0 ? '-' : `${judged.filter(Boolean).length}/${judged.length}`
}

/** Reasons listed per policy at most. */
const REASONS_SHOWN = 8

/**
 * @param path - the log.
 * @param log - the log read.
 * @param simulation - the figures of the recorded selection and each policy.
 * @param page - the page `--report` wrote.
 * @returns a summary line, the policies side by side with their change against the recorded run, one row per probe,
 * the reasons each policy gave for what it left out, and the page written.
 */
export function simulationTables(path: string, log: ReadLog, simulation: Simulation, page?: string): string {
  const { figures, probes, contextWindow } = simulation
  const [recorded] = figures
  const requests = recorded?.requests ?? 0
  const head = `simulate ${printable(path)}: session ${printable(String(log.header.id))}, ${requests} requests replayed under ${figures.length - 1} polic${figures.length === 2 ? 'y' : 'ies'} beside the recorded selection (DSH token meter${contextWindow === undefined ? '; the log records no context window' : `; context window ${count(contextWindow)} as recorded`})`
  const facts = probes.some(probe => probe.fact !== undefined)
  const columns: [string, 'left' | 'right', (f: PolicyFigures) => string][] = [
    ['policy', 'left', f => printable(f.name)],
    ['projected', 'right', f => `${f.projected}/${f.requests}`],
    ['tokens sum', 'right', f => count(f.tokens.sum)],
    ['vs recorded', 'right', f => f === recorded ? '-' : delta(f.tokens.sum, recorded?.tokens.sum ?? 0)],
    ['peak', 'right', f => count(f.tokens.peak)],
    ['p95', 'right', f => count(f.tokens.p95)],
    ...contextWindow === undefined ? [] : [['over window', 'right', (f: PolicyFigures) => count(f.overflows ?? 0)] as [string, 'right', (f: PolicyFigures) => string]],
    ['prefix reuse', 'right', f => percentText(f.prefixReuse)],
    ['host additions', 'right', f => f.hostAdditions === undefined ? '-' : count(f.hostAdditions)],
    ['input sent', 'right', f => probes.length === 0 ? '-' : passed(f.inputSent)],
    ...facts ? [['facts sent', 'right', (f: PolicyFigures) => passed(f.factSent)] as [string, 'right', (f: PolicyFigures) => string]] : [],
  ]
  const lines = [head, ...aligned([columns.map(([name]) => name), ...figures.map(f => columns.map(([, , cell]) => cell(f)))], columns.map(([, align]) => align))]
  if (probes.length === 0) lines.push('', 'probes: no policy module exports probes')
  else {
    const probeRows = [
      ['probe turn', 'refers to', ...facts ? ['fact'] : [], ...figures.map(f => printable(f.name))],
      ...probes.map((probe, i) => [`${probe.turn}`, probe.refersTo.join(' '), ...facts ? [probe.fact === undefined ? '-' : printable(JSON.stringify(probe.fact))] : [],
        ...figures.map(f => `input ${f.inputSent[i] === true ? 'sent' : 'missing'}${f.factSent[i] === undefined ? '' : `, fact ${f.factSent[i] ? 'sent' : 'missing'}`}`)]),
    ]
    lines.push('', 'input sent: the probe turn\'s first request sent the user input of the turns it refers to; fact sent: a request of the probe turn sent the fact\'s text (any message: user input, replies, tool calls and results, summaries)',
      ...aligned(probeRows, probeRows[0]?.map((_, c) => c < 2 ? 'right' : 'left') ?? []))
  }
  for (const f of figures) {
    if (f.reasons.length === 0) continue
    lines.push('', `why ${printable(f.name)} left nodes out (its reasons; requests × nodes):`, ...aligned(f.reasons.slice(0, REASONS_SHOWN).map(({ reason, count: times }) => [count(times), printable(reason)]), ['right', 'left']))
    if (f.reasons.length > REASONS_SHOWN) lines.push(`  and ${f.reasons.length - REASONS_SHOWN} more reasons (--json lists all)`)
  }
  if (page !== undefined) lines.push('', `wrote ${printable(page)}: the recorded map and each policy's, one selection switch`)
  return `${lines.join('\n')}\n`
}

/**
 * @param path - the log.
 * @param log - the log read.
 * @param simulation - the figures of the recorded selection and each policy.
 * @param page - the page `--report` wrote.
 * @returns `{ file, session, events, probes, contextWindow?, policies, report?, violation? }` as one JSON document.
 */
export function simulationJson(path: string, log: ReadLog, simulation: Simulation, page?: string): string {
  const { violation } = simulation.analysis
  return safeJson({
    file: path,
    session: log.header.id,
    events: log.events,
    probes: simulation.probes,
    ...simulation.contextWindow === undefined ? {} : { contextWindow: simulation.contextWindow },
    policies: simulation.figures,
    ...page === undefined ? {} : { report: page },
    ...violation === undefined ? {} : { violation: located(log, violation) },
  })
}
