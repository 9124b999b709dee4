/**
 * `pnpm bench`: runs P1-P12, prints each table, and rewrites `BENCHMARKS.md` and `BENCHMARKS.svg` at the workspace
 * root. `--quick` runs smaller sizes and fewer repetitions and writes nothing. `--only P7` (repeatable, or
 * comma-separated ids) runs the named sections and replaces only them in `BENCHMARKS.md`, leaving the rest and the chart.
 * @module bench/run
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { growthChart, linearReference } from './chart.ts'
import { benchOverhead } from './p1-overhead.ts'
import { benchNormalize } from './p2-normalize.ts'
import { benchReplay } from './p3-replay.ts'
import { benchCli } from './p3-cli.ts'
import { benchManaged } from './p4-managed.ts'
import { benchCompaction } from './p5-compaction.ts'
import { benchSeriesOverhead } from './p1-src.ts'
import { benchKeepLast } from './p6-keep-last.ts'
import { benchTavernStep } from './p7-tavern-step.ts'
import { benchSimulate } from './p8-simulate.ts'
import { benchReport } from './p9-report.ts'
import { benchStepWindow } from './p10-step-window.ts'
import { benchLogBytes } from './p11-log-bytes.ts'
import { benchPolicyCache } from './p12-policy-cache.ts'
import type { Section } from './report.ts'
import { renderReport, renderSection, spliceSections } from './report.ts'

const ROOT = new URL('../../', import.meta.url)
const CHART = 'BENCHMARKS.svg'

const { values } = parseArgs({ options: { quick: { type: 'boolean' }, only: { type: 'string', multiple: true } } })
const quick = values.quick === true
const only = values.only === undefined ? undefined : new Set(values.only.flatMap(ids => ids.split(',')))
const IDS = ['P1', 'P2', 'P3', 'P3-cli', 'P4', 'P5', 'P1-src', 'P6', 'P7', 'P8', 'P9', 'P10', 'P11', 'P12']
const unknown = [...only ?? []].filter(id => !IDS.includes(id))
if (unknown.length > 0) throw new Error(`--only names no benchmark ${unknown.join(', ')}; known: ${IDS.join(', ')}`)
const wanted = (id: string): boolean => only === undefined || only.has(id)
const started = performance.now()
const log = (line: string): void => { process.stderr.write(`bench: ${line}\n`) }
const sections: Section[] = []
const show = (section: Section): void => {
  sections.push(section)
  if (section.skipped === undefined) process.stdout.write(`\n${renderSection(section)}\n`)
  else process.stdout.write(`\nskipped ${section.id} (${section.title}): ${section.skipped}\n`)
}

if (typeof (globalThis as { gc?: unknown }).gc !== 'function') log('run Node with --expose-gc for steadier figures')
if (wanted('P1')) show(await benchOverhead(quick, log))
const normalize = wanted('P2') ? benchNormalize(quick) : undefined
if (normalize !== undefined) show(normalize.section)
const replay = wanted('P3') ? await benchReplay(quick, log) : undefined
if (replay !== undefined) show(replay.section)
if (wanted('P3-cli')) show(await benchCli(quick, log))
// P5 compares against P4's runs.
const managed = wanted('P4') || wanted('P5') ? await benchManaged(quick, log) : undefined
if (managed !== undefined && wanted('P4')) show(managed.section)
if (managed !== undefined && wanted('P5')) show(await benchCompaction(managed, log))
if (wanted('P1-src')) show(await benchSeriesOverhead(quick, log))
if (wanted('P6')) show(await benchKeepLast(quick, log))
if (wanted('P7')) show(await benchTavernStep(quick, log))
if (wanted('P8')) show(await benchSimulate(quick, log))
if (wanted('P9')) show(await benchReport(quick, log))
if (wanted('P10')) show(await benchStepWindow(quick, log))
if (wanted('P11')) show(await benchLogBytes(quick, log))
if (wanted('P12')) show(await benchPolicyCache(quick, log))

// Both growth series, or no chart (an `--only` run).
const chart = normalize === undefined || replay === undefined ? undefined : growthChart([
  {
    title: 'P2: normalizeSelection per call',
    xLabel: 'surface nodes',
    yLabel: 'ms per call',
    series: [
      { name: 'normalizeSelection', color: '#1f77b4', points: normalize.points.map(p => [p.nodes, p.ms]) },
      { name: 'linear from the first point', color: '#999', dashed: true, points: linearReference(normalize.points.map(p => [p.nodes, p.ms])) },
    ],
  },
  {
    title: 'P3: rebuilding every request of a log',
    xLabel: 'turns',
    yLabel: 'ms per log',
    series: [
      { name: 'replayRequests (one pass)', color: '#2ca02c', points: replay.points.map(p => [p.turns, p.replayMs]) },
      { name: 'prefix method (largest size sampled)', color: '#d62728', points: replay.points.map(p => [p.turns, p.prefixMs]) },
      { name: 'linear from replay\'s first point', color: '#999', dashed: true, points: linearReference(replay.points.map(p => [p.turns, p.replayMs])) },
    ],
  },
])
const seconds = (performance.now() - started) / 1000
const report = new URL('BENCHMARKS.md', ROOT)
if (quick) {
  log('--quick: BENCHMARKS.md and BENCHMARKS.svg left unchanged')
} else if (only !== undefined) {
  writeFileSync(report, spliceSections(readFileSync(report, 'utf8'), sections))
  log(`replaced ${sections.map(section => section.id).join(', ')} in BENCHMARKS.md; the rest and ${CHART} left unchanged (${seconds.toFixed(0)} s)`)
} else if (chart !== undefined) {
  writeFileSync(new URL(CHART, ROOT), chart)
  writeFileSync(report, renderReport(sections, { date: new Date(), seconds, command: 'pnpm bench', chart: CHART }))
  log(`wrote BENCHMARKS.md and ${CHART} (${seconds.toFixed(0)} s)`)
}
