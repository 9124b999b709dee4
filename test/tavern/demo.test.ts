/**
 * The AgentTavern demo at full length (300 turns): every printed target holds, native compacts under pressure while
 * managed never needs to, each recall probe is answered from the tool's logged result, and the one-command script
 * prints the targets and writes the chart.
 */

import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { DemoReport } from '@dsh-context/agent-tavern/demo'
import { reportChart, requestsCsv, runDemo } from '@dsh-context/agent-tavern/demo'
import { beforeAll, describe, expect, it } from 'vitest'

const TURNS = 300
const WINDOW = 90_000

let report: DemoReport
beforeAll(async () => { report = await runDemo({ turns: TURNS, contextWindow: WINDOW }) })

describe(`the ${TURNS}-turn demo`, () => {
  it('meets every target', () => {
    expect(report.targets.map(target => target.name)).toEqual([
      'both modes ran without agent errors',
      'managed peak request tokens <= 15% of native peak',
      'managed prefix reuse >= 90% of request tokens',
      'every recall probe answered from the log via tavern_history_search',
      'every request rebuilt from the log',
    ])
    expect(report.targets.filter(target => !target.pass)).toEqual([])
    expect(report.managed.peak / report.native.peak).toBeLessThanOrEqual(0.15)
    expect(report.managed.prefixReuse).toBeGreaterThanOrEqual(0.9)
  })

  it('runs the same script in both modes: same turns and requests, native compacting under pressure, managed never', () => {
    const turnsOf = (rows: readonly { turn: number; step: number }[]): string => rows.map(row => `${row.turn}.${row.step}`).join()
    expect(turnsOf(report.managed.rows)).toBe(turnsOf(report.native.rows))
    expect(report.native.rows.at(-1)!.turn).toBe(TURNS)
    expect(report.native.compactions).toBeGreaterThanOrEqual(1)
    expect(report.managed.compactions).toBe(0)
    expect(report.native.projected).toBe(0)
    expect(report.managed.projected).toBeGreaterThan(report.managed.rows.length * 0.9)
  })

  it('answers every probe from the tool result, also where native compaction or the managed projection left the fact out', () => {
    const { native, managed } = report
    expect(native.probes.map(probe => probe.turn)).toEqual([175, 200, 225, 250, 275, 300])
    for (const probe of [...native.probes, ...managed.probes]) expect(probe).toMatchObject({ searched: true, found: true, answered: true })
    expect(managed.probes.filter(probe => probe.inRequest)).toEqual([])
    expect(native.probes.filter(probe => !probe.inRequest).length).toBeGreaterThan(0)
  })

  it('charts one line per mode and lists every request', () => {
    const svg = reportChart(report, TURNS)
    expect(svg.match(/<polyline /g)).toHaveLength(2)
    expect(svg).toContain(`dsh-native (peak ${report.native.peak.toLocaleString('en-US')})`)
    expect(requestsCsv(report).trim().split('\n')).toHaveLength(1 + report.native.rows.length + report.managed.rows.length)
  })
})

describe('npm run tavern', () => {
  it('without DEEPSEEK_API_KEY runs the scripted model, prints every target as PASS, exits 0 and writes the chart', async () => {
    const bin = fileURLToPath(new URL('../../packages/agent-tavern/bin/demo.mjs', import.meta.url))
    const { DEEPSEEK_API_KEY: _key, ...env } = process.env
    const { stdout } = await promisify(execFile)(process.execPath, [bin], { encoding: 'utf8', env })
    expect(stdout).toContain('scripted offline model\non route fake/fake-model')
    expect(stdout.match(/^PASS {2}/gm)).toHaveLength(5)
    expect(stdout).not.toMatch(/^FAIL/m)
    expect(stdout).toMatch(/managed peak request tokens <= 15% of native peak: \d+ \/ \d+ = \d+\.\d%/)
    const svg = readFileSync(fileURLToPath(new URL('../../out/tavern-tokens.svg', import.meta.url)), 'utf8')
    expect(svg).toMatch(/^<svg /)
  })
})
