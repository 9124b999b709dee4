/**
 * The AgentTavern demo in both languages. Scaled down for CI (200 turns on a 60,000-token window, blocks of 3,600):
 * every printed target holds, managed never compacts while native does (in English; the shorter Chinese story stays
 * just under its threshold at this scale) and then leaves facts out of its requests, each recall probe is
 * answered from the tool's logged result, and the chart shows estimated and provider-reported tokens. At full length
 * (300 turns, 90,000 tokens) through the one-command script, `npm run tavern` and `npm run tavern -- --lang zh`.
 */

import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { DemoReport, StoryLanguage } from '@dsh-seam/agent-tavern-demo'
import { reportChart, requestsCsv, runDemo } from '@dsh-seam/agent-tavern-demo'
import { beforeAll, describe, expect, it } from 'vitest'

const TURNS = 200
const WINDOW = 60_000
const POLICY = { blockTokens: 3_600 }
const TARGETS = [
  'both modes ran without agent errors',
  'managed peak request tokens <= 15% of native peak',
  'managed prefix reuse >= 90% of request tokens',
  'every recall probe answered from the log via tavern_history_search',
  'every request rebuilt from the log',
]

describe.each<StoryLanguage>(['en', 'zh'])(`the %s demo, scaled to ${TURNS} turns on a ${WINDOW}-token window`, lang => {
  let report: DemoReport
  beforeAll(async () => { report = await runDemo({ turns: TURNS, contextWindow: WINDOW, lang, tavern: { policy: POLICY } }) }, 240_000)

  it('meets every target', () => {
    expect(report.targets.map(target => target.name)).toEqual(TARGETS)
    expect(report.targets.filter(target => !target.pass)).toEqual([])
    expect(report.managed.providerPeak / report.native.providerPeak).toBeLessThanOrEqual(0.15)
    expect(report.managed.prefixReuse).toBeGreaterThanOrEqual(0.9)
  })

  it('runs the same script in both modes: same turns and requests, native compacting under pressure, managed never', () => {
    const turnsOf = (rows: readonly { turn: number; step: number }[]): string => rows.map(row => `${row.turn}.${row.step}`).join()
    expect(turnsOf(report.managed.rows)).toBe(turnsOf(report.native.rows))
    expect(report.native.rows.at(-1)!.turn).toBe(TURNS)
    if (lang === 'en') expect(report.native.compactions).toBeGreaterThanOrEqual(1)
    expect(report.managed.compactions).toBe(0)
    expect(report.native.projected).toBe(0)
    expect(report.managed.projected).toBeGreaterThan(report.managed.rows.length * 0.8)
  })

  it('answers every probe from the tool result, also where native compaction or the managed projection left the fact out', () => {
    const { native, managed } = report
    expect(native.probes).toHaveLength(6)
    for (const probe of [...native.probes, ...managed.probes]) expect(probe).toMatchObject({ searched: true, found: true, answered: true })
    expect(managed.probes.filter(probe => !probe.inRequest).length).toBeGreaterThanOrEqual(5)
    expect(native.probes.some(probe => !probe.inRequest)).toBe(native.compactions > 0)
    if (lang === 'zh') expect(managed.probes.map(probe => probe.expect)).toEqual(['417', '伊尔莎贝', '科林', '蓟草与潮汐', '霜月初九', '贝内德克'])
  })

  it('reports the provider usage of every request; the meter under-prices Chinese more than English', () => {
    const rows = [...report.native.rows, ...report.managed.rows]
    expect(rows.every(row => row.provider !== undefined && row.provider > 0)).toBe(true)
    const ratio = report.native.providerPeak / report.native.peak
    if (lang === 'zh') expect(ratio).toBeGreaterThan(1.5)
    else expect(ratio).toBeLessThan(1.2)
  })

  it('charts estimated and provider-reported tokens per mode and lists every request', () => {
    const svg = reportChart(report, TURNS)
    expect(svg.match(/<polyline /g)).toHaveLength(4)
    expect(svg).toContain(`dsh-native, estimated (peak ${report.native.peak.toLocaleString('en-US')})`)
    expect(svg).toContain(`agent-managed, provider-reported (peak ${report.managed.providerPeak.toLocaleString('en-US')})`)
    expect(requestsCsv(report).trim().split('\n')).toHaveLength(1 + report.native.rows.length + report.managed.rows.length)
  })
})

describe('npm run tavern', () => {
  const bin = fileURLToPath(new URL('../../examples/agent-tavern-demo/bin/demo.mjs', import.meta.url))
  const { DEEPSEEK_API_KEY: _key, ...env } = process.env

  it.each([
    { args: [], lang: 'English', chart: 'tavern-tokens.svg' },
    { args: ['--lang', 'zh'], lang: 'Chinese', chart: 'tavern-tokens-zh.svg' },
  ])('$args: the full $lang demo without DEEPSEEK_API_KEY prints every target as PASS, exits 0 and writes the chart', async ({ args, lang, chart }) => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, ...args], { encoding: 'utf8', env, maxBuffer: 16 * 1024 * 1024 })
    expect(stdout).toContain(`AgentTavern demo: a 300-turn ${lang} roleplay`)
    expect(stdout).toContain('scripted offline model\non route fake/fake-model with a 90,000-token context window')
    expect(stdout.match(/^PASS {2}/gm)).toHaveLength(5)
    expect(stdout).not.toMatch(/^FAIL/m)
    expect(stdout).toMatch(/managed peak request tokens <= 15% of native peak: provider-reported \d+ \/ \d+ = \d+\.\d% \(estimated \d+ \/ \d+ = \d+\.\d%\)/)
    const svg = readFileSync(fileURLToPath(new URL(`../../out/${chart}`, import.meta.url)), 'utf8')
    expect(svg).toMatch(/^<svg /)
  }, 300_000)

  it('refuses an unknown language', async () => {
    await expect(promisify(execFile)(process.execPath, [bin, '--lang', 'fr'], { encoding: 'utf8', env })).rejects.toMatchObject({ stderr: expect.stringContaining('--lang must be en or zh, got fr') })
  })
})
