/**
 * `pnpm bench`: runs P1-P8, prints each table, and rewrites `BENCHMARKS.md` and `BENCHMARKS.svg` at the workspace
 * root. `--quick` runs smaller sizes and fewer repetitions and writes nothing.
 * @module bench/run
 */

import { writeFileSync } from 'node:fs'
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
import type { Section } from './report.ts'
import { renderReport, renderSection } from './report.ts'

const ROOT = new URL('../../', import.meta.url)
const CHART = 'BENCHMARKS.svg'

const { values } = parseArgs({ options: { quick: { type: 'boolean' } } })
const quick = values.quick === true
const started = performance.now()
const log = (line: string): void => { process.stderr.write(`bench: ${line}\n`) }
const sections: Section[] = []
const show = (section: Section): void => {
  sections.push(section)
  if (section.skipped === undefined) process.stdout.write(`\n${renderSection(section)}\n`)
  else process.stdout.write(`\nskipped ${section.id} (${section.title}): ${section.skipped}\n`)
}

if (typeof (globalThis as { gc?: unknown }).gc !== 'function') log('run Node with --expose-gc for steadier figures')
show(await benchOverhead(quick, log))
const normalize = benchNormalize(quick)
show(normalize.section)
const replay = await benchReplay(quick, log)
show(replay.section)
show(await benchCli(quick, log))
const managed = await benchManaged(quick, log)
show(managed.section)
show(await benchCompaction(managed, log))
show(await benchSeriesOverhead(quick, log))
show(await benchKeepLast(quick, log))
show(await benchTavernStep(quick, log))
show(await benchSimulate(quick, log))

const chart = growthChart([
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
if (quick) {
  log('--quick: BENCHMARKS.md and BENCHMARKS.svg left unchanged')
} else {
  const seconds = (performance.now() - started) / 1000
  writeFileSync(new URL(CHART, ROOT), chart)
  writeFileSync(new URL('BENCHMARKS.md', ROOT), renderReport(sections, { date: new Date(), seconds, command: 'pnpm bench', chart: CHART }))
  log(`wrote BENCHMARKS.md and ${CHART} (${seconds.toFixed(0)} s)`)
}
