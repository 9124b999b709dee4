/**
 * Benchmark tables as Markdown, for the terminal and for `BENCHMARKS.md`.
 * @module bench/report
 */

import { arch, cpus, platform, release, totalmem } from 'node:os'

/** One table of results. */
interface Table {
  readonly columns: readonly string[]
  readonly rows: readonly (readonly string[])[]
}

/** One benchmark's results. */
export interface Section {
  /** `P1` … `P5`. */
  readonly id: string
  readonly title: string
  /** What is measured and how, one paragraph. */
  readonly method: string
  /** The target from issue 6. */
  readonly target: string
  /** Whether the target is met, with the deciding figure; `pending` when the measured code does not exist yet. */
  readonly verdict: string
  readonly table: Table
  readonly notes?: readonly string[]
  /** Why this run could not measure it (what it needs and lacks); the section then has no figures. */
  readonly skipped?: string
}

/**
 * @param table - columns and rows.
 * @returns a Markdown table.
 */
function markdownTable(table: Table): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`
  return [line(table.columns), line(table.columns.map(() => '---')), ...table.rows.map(line)].join('\n')
}

/**
 * @param section - one benchmark's results.
 * @returns its Markdown: heading, method, target and verdict, table, notes.
 */
export function renderSection(section: Section): string {
  if (section.skipped !== undefined) {
    return [`## ${section.id}. ${section.title}`, '', section.method, '', `Target: ${section.target}. **Not measured in this run: ${section.skipped}.**`].join('\n')
  }
  return [
    `## ${section.id}. ${section.title}`,
    '',
    section.method,
    '',
    `Target: ${section.target}. **${section.verdict}**`,
    '',
    markdownTable(section.table),
    ...section.notes === undefined || section.notes.length === 0 ? [] : ['', ...section.notes.map(note => `- ${note}`)],
  ].join('\n')
}

/** The machine a run measured. */
function machine(): string {
  const cores = cpus()
  return `${cores[0]?.model.trim() ?? 'unknown CPU'} × ${cores.length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()} ${arch()}`
}

/**
 * @param sections - every benchmark's results.
 * @param run - when, how long, and with which command.
 * @returns the whole `BENCHMARKS.md`.
 */
export function renderReport(sections: readonly Section[], run: { date: Date; seconds: number; command: string; chart: string }): string {
  return [
    '# Benchmarks',
    '',
    `Written by \`${run.command}\` (bench/src/run.ts); do not edit by hand. Figures are ratios measured side by side in one`,
    'process, because absolute times on a shared machine are noise.',
    '',
    `- Machine: ${machine()}`,
    `- Node: ${process.version}`,
    `- Date: ${run.date.toISOString()}`,
    `- Run time: ${run.seconds.toFixed(0)} s`,
    '',
    `![P2 and P3 growth](${run.chart})`,
    '',
    markdownTable({
      columns: ['', 'benchmark', 'verdict'],
      rows: sections.map(section => [section.id, section.title, section.skipped === undefined ? section.verdict : 'not measured in this run']),
    }),
    '',
    ...sections.flatMap(section => [renderSection(section), '']),
  ].join('\n')
}

/**
 * Replace sections of a written report, each from its heading to the next, and its row of the summary table when it
 * has one; everything else is kept.
 * @param report - the current `BENCHMARKS.md`.
 * @param sections - the sections to replace.
 * @returns the new report.
 * @throws {Error} when the report has no heading for a section.
 */
export function spliceSections(report: string, sections: readonly Section[]): string {
  let text = report
  for (const section of sections) {
    const heading = text.indexOf(`\n## ${section.id}. `)
    if (heading === -1) throw new Error(`BENCHMARKS.md has no section ${section.id}; run the whole benchmark`)
    const next = text.indexOf('\n## ', heading + 1)
    const end = next === -1 ? text.length : next
    text = `${text.slice(0, heading + 1)}${renderSection(section)}\n${text.slice(end)}`
    const row = `| ${section.id} | `
    const at = text.indexOf(`\n${row}`)
    if (at !== -1) {
      const lineEnd = text.indexOf('\n', at + 1)
      const verdict = section.skipped === undefined ? section.verdict : 'not measured in this run'
      text = `${text.slice(0, at + 1)}| ${section.id} | ${section.title} | ${verdict} |${text.slice(lineEnd)}`
    }
  }
  return text
}

/**
 * @param met - whether the target is met.
 * @param figures - the deciding figures.
 * @returns `met (figures)` or `not met: figures`.
 */
export function verdict(met: boolean, figures: string): string {
  return met ? `met (${figures})` : `not met: ${figures}`
}
