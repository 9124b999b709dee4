/**
 * P9: the `dsh-seam report` page of a 20,000-turn session stays usable: its size, the time `report` takes to write
 * it, and in headless Chromium the time until the map is drawn and the time of the debugging flow's steps (go to the
 * last request with its inspector and diff, the whole-session overview, a text search over every node).
 * @module bench/p9-report
 */

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI_BIN } from '@dsh-seam/cli'
import { chromium } from 'playwright-core'
import { recordLogs } from './p3-cli.ts'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { significant } from './stats.ts'

/** Longest time until the page's map is drawn, in seconds. */
const TARGET_READY_S = 3
/** Longest time of one step of the debugging flow, in seconds. */
const TARGET_STEP_S = 1

/** Debian's binary first (its /usr/bin/chromium is a wrapper script); `CHROMIUM` overrides. */
const CHROMIUM = [process.env['CHROMIUM'], '/usr/lib/chromium/chromium', '/usr/bin/chromium'].find(path => path !== undefined && path !== '' && existsSync(path))

/** In the page: run one step of the flow and return its milliseconds once the page has drawn it. */
const TIMED = (step: string): string => `new Promise(done => { const t = performance.now(); ${step}; requestAnimationFrame(() => setTimeout(() => done(performance.now() - t), 0)) })`

/**
 * @param quick - a 2,000-turn log instead of 20,000.
 * @param log - progress sink.
 * @returns the P9 section.
 */
export async function benchReport(quick: boolean, log: (line: string) => void): Promise<Section> {
  const turns = quick ? 2_000 : 20_000
  const base = { id: 'P9', title: '`dsh-seam report` of a 20,000-turn session in a browser' }
  if (CHROMIUM === undefined) return { ...base, method: '', target: '', verdict: '', table: { columns: [], rows: [] }, skipped: 'no Chromium (apt-get install chromium)' }
  const dir = mkdtempSync(join(tmpdir(), 'bench-p9-report-'))
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
  try {
    const path = (await recordLogs(dir, [turns], log)).get(turns) as string
    const html = join(dir, 'report.html')
    const started = performance.now()
    const made = spawnSync(process.execPath, [CLI_BIN, 'report', path, '-o', html, '--quiet'], { encoding: 'utf8' })
    const writeS = (performance.now() - started) / 1000
    if (made.status !== 0) throw new Error(`P9: dsh-seam report exited ${made.status}: ${made.stderr}`)
    log(`P9: ${made.stdout.trim()}`)
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    await page.goto(`file://${html}`)
    await page.locator('#mapsvg').waitFor()
    const readyS = Number(await page.evaluate('performance.now()')) / 1000
    const requests = await page.evaluate(`JSON.parse(document.getElementById('report-data').textContent).requests.length`) as number
    const steps: [string, string][] = [
      [`go to request ${requests.toLocaleString('en-US')} (#request=${requests}): map page, inspector, diff`, `location.hash = '#request=${requests}'`],
      ['whole-session overview (every nth request on one map)', `document.getElementById('overview').click()`],
      [`search every node's text ("Turn ${turns - 1}:")`, `document.getElementById('search').value = 'Turn ${turns - 1}:'; document.getElementById('searchform').requestSubmit()`],
    ]
    const timed: [string, number][] = []
    for (const [name, step] of steps) timed.push([name, Number(await page.evaluate(TIMED(step))) / 1000])
    const barPx = await page.evaluate(`(() => {
      const bars = new Map()
      for (const r of document.querySelectorAll('#chart rect[data-bar]')) bars.set(r.getAttribute('data-bar'), (bars.get(r.getAttribute('data-bar')) ?? 0) + r.getBoundingClientRect().height)
      return Math.min(...bars.values())
    })()`) as number
    const overviewRows = await page.evaluate(`document.querySelectorAll('#rows tr').length`) as number
    const bytes = statSync(html).size
    const worst = Math.max(...timed.map(([, s]) => s))
    return {
      ...base,
      method: `A real patched loop records ${turns.toLocaleString('en-US')} turns (the P3-cli recording: every third turn calls \`echo\`, a keep-last-6-nodes listener); `
        + '`dsh-seam report` writes the page; headless Chromium (Debian\'s, through `playwright-core`) opens it from `file:` and the page\'s own '
        + '`performance.now()` gives the time from navigation to the drawn map, then each step of the debugging flow until the next frame.',
      target: `the map drawn within ${TARGET_READY_S} s, each step within ${TARGET_STEP_S} s`,
      verdict: verdict(readyS <= TARGET_READY_S && worst <= TARGET_STEP_S, `ready in ${significant(readyS)} s, slowest step ${significant(worst)} s`),
      table: {
        columns: ['figure', 'value'],
        rows: [
          ['log', `${turns.toLocaleString('en-US')} turns, ${requests.toLocaleString('en-US')} requests, ${significant(statSync(path).size / 2 ** 20)} MiB`],
          ['page size', `${significant(bytes / 2 ** 20)} MiB`],
          ['`dsh-seam report` wall time', `${significant(writeS)} s`],
          ['page ready (map drawn)', `${significant(readyS)} s`],
          ...timed.map(([name, s]): [string, string] => [name, `${significant(s)} s`]),
          ['lowest sent bar of the token chart', `${significant(barPx)} px of 160`],
          ['map rows in the overview', overviewRows.toLocaleString('en-US')],
        ],
      },
    }
  } finally {
    await browser.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
