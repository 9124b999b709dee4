/**
 * `dsh-seam report` in a real browser: the page a compacted, projected session produces opens in headless Chromium
 * (Debian's `chromium`, driven by `playwright-core`; nothing is downloaded), every map cell on screen says what the
 * log's projections say about that node, the demo's managed session is drawn as `inspect` reports it, hovering shows log text as text, and a screenshot is written to `out/`.
 * Without a Chromium the suite is skipped with one printed line.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { readSessionLog, replayRequests } from '@dsh-seam/agent-context'
import type { RequestSummary } from '@dsh-seam/cli'
import { CELL, EXIT } from '@dsh-seam/cli'
import { bootLoop, conversationReply, keepLastNodes, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import type { Browser, Page } from 'playwright-core'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compactedSession, managedDemoSession, runCli, selected, surfaceBefore } from './support.ts'

/** Debian's binary first (its /usr/bin/chromium is a wrapper script), then the wrapper; `CHROMIUM` overrides. */
const CANDIDATES = [process.env['CHROMIUM'], '/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser']
const executable = CANDIDATES.find(path => path !== undefined && path !== '' && existsSync(path))
if (executable === undefined) console.log('report browser test skipped: no Chromium installed (apt-get install chromium)')

const OUT = new URL('../../out/', import.meta.url)
const root = mkdtempSync(join(tmpdir(), 'dsh-seam-report-'))
let browser: Browser | undefined
afterAll(async () => {
  await browser?.close()
  rmSync(root, { recursive: true, force: true })
})

/** What each cell must show, from DSH's own surface fold and the projections the log records. */
function expectedCells(events: readonly SessionEvent[]): { columns: number[]; rows: Map<number, number>[] } {
  const seen = new Set<number>()
  const rows = replayRequests(events).map(request => {
    const surface = surfaceBefore(events, request.seq)
    const sent = new Set(request.projection === undefined ? surface : selected(surface, request.projection.include))
    const row = new Map<number, number>()
    for (const seq of seen) row.set(seq, CELL.replaced)
    for (const seq of surface) {
      row.set(seq, sent.has(seq) ? CELL.sent : CELL.left)
      seen.add(seq)
    }
    return row
  })
  return { columns: [...seen].sort((a, b) => a - b), rows }
}

/**
 * In the page: every map cell of the first map page as drawn, the `data-cell` of the element at the cell's centre
 * (0 where nothing is drawn), and the seq of each column. Page code, so a string: this program has no DOM types.
 */
const DRAWN_CELLS = `(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent)
  const svg = document.getElementById('mapsvg')
  svg.scrollIntoView()
  const [cw, rh, x0, y0] = ['data-cw', 'data-rh', 'data-x0', 'data-y0'].map(name => Number(svg.getAttribute(name)))
  const box = svg.getBoundingClientRect()
  const rows = []
  for (let r = 0; r < Math.min(data.requests.length, data.pageRows); r++) {
    const row = []
    for (let c = 0; c < data.nodes.length; c++) {
      const cell = document.elementFromPoint(box.left + x0 + (c + 0.5) * cw, box.top + y0 + (r + 0.5) * rh)?.getAttribute('data-cell')
      row.push(cell === null || cell === undefined ? 0 : Number(cell))
    }
    rows.push(row)
  }
  return { columns: data.nodes.map(node => node[0]), rows }
})()`

async function drawnCells(page: Page): Promise<{ columns: number[]; rows: number[][] }> {
  await page.selectOption('#zoom', '8')
  return page.evaluate(DRAWN_CELLS) as Promise<{ columns: number[]; rows: number[][] }>
}

async function open(path: string): Promise<Page> {
  browser ??= await chromium.launch({ executablePath: executable as string, headless: true, args: ['--no-sandbox'] })
  const page = await browser.newPage({ viewport: { width: 1400, height: 1600 } })
  const requests: string[] = []
  page.on('request', request => { if (!request.url().startsWith('file:')) requests.push(request.url()) })
  await page.goto(`file://${path}`)
  expect(requests).toEqual([])
  return page
}

describe.skipIf(executable === undefined)('dsh-seam report in Chromium', () => {
  let log: string
  let events: SessionEvent[]

  beforeAll(async () => {
    const run = await compactedSession(root)
    expect(run.compactions).toBeGreaterThan(0)
    log = sessionLogPath(run.loop, run.agent)
    events = (await readSessionLog(log)).events
  })

  it('draws every cell of the map as the log\'s projections and compactions say', async () => {
    const html = join(root, 'report.html')
    const made = runCli('report', log, '-o', html)
    expect(made.stderr).toBe('')
    expect(made.status).toBe(EXIT.ok)
    const page = await open(html)
    const drawn = await drawnCells(page)
    const expected = expectedCells(events)
    expect(drawn.columns).toEqual(expected.columns)
    expect(drawn.rows.length).toBe(expected.rows.length)
    const statuses = new Set<number>()
    drawn.rows.forEach((row, r) => {
      const want = expected.columns.map(seq => (expected.rows[r] as Map<number, number>).get(seq) ?? CELL.absent)
      const got = row.map(cell => cell === CELL.required ? CELL.sent : cell)
      expect(got, `request ${r + 1}`).toEqual(want)
      for (const cell of row) statuses.add(cell)
      const tail = want.lastIndexOf(CELL.sent)
      expect(row[tail], `request ${r + 1}: the surface tail is required`).toBe(CELL.required)
    })
    expect(new Set(statuses)).toEqual(new Set([CELL.absent, CELL.sent, CELL.required, CELL.left, CELL.replaced]))
    mkdirSync(OUT, { recursive: true })
    await page.screenshot({ path: new URL('report-browser.png', OUT).pathname, fullPage: false })
    expect(readFileSync(new URL('report-browser.png', OUT)).subarray(1, 4).toString()).toBe('PNG')
  })

  it('draws the demo\'s managed session as inspect reports it', async () => {
    const { path, errors } = await managedDemoSession(join(root, 'tavern'), 40)
    expect(errors).toEqual([])
    const html = join(root, 'tavern.html')
    expect(runCli('report', path, '-o', html).status).toBe(EXIT.ok)
    const { requests } = JSON.parse(runCli('inspect', path, '--json').stdout) as { requests: RequestSummary[] }
    const drawn = await drawnCells(await open(html))
    expect(requests.filter(request => request.projectionSeq !== undefined).length).toBeGreaterThan(requests.length / 2)
    expect(drawn.rows.map(row => ({
      surfaceNodes: row.filter(cell => cell === CELL.sent || cell === CELL.required || cell === CELL.left).length,
      includedNodes: row.filter(cell => cell === CELL.sent || cell === CELL.required).length,
    }))).toEqual(requests.map(({ surfaceNodes, includedNodes }) => ({ surfaceNodes, includedNodes })))
  })

  it('shows log text as text on hover, in a page that runs nothing from the log', async () => {
    const loop = await bootLoop(await patchedDsh(), { persistRoot: join(root, 'hostile'), fallback: conversationReply() })
    const agent = loop.create('hostile')
    agent.ctx.on('agent/context', keepLastNodes(2))
    const forged = '</script><img src=x onerror="window.pwned=1"><b>bold</b>'
    for (const text of ['first', forged, 'third']) await loop.say(agent, text)
    await loop.ctx.sessions.flush(agent.session)
    const html = join(root, 'hostile.html')
    expect(runCli('report', sessionLogPath(loop, agent), '-o', html).status).toBe(EXIT.ok)
    const page = await open(html)
    await page.selectOption('#zoom', '16')
    const column = await page.evaluate(`JSON.parse(document.getElementById('report-data').textContent).nodes.findIndex(node => node[5] === ${JSON.stringify(forged)})`) as number
    expect(column).toBeGreaterThan(-1)
    const svg = page.locator('#mapsvg')
    const [x0, y0, cw, rh] = await Promise.all(['data-x0', 'data-y0', 'data-cw', 'data-rh'].map(async name => Number(await svg.getAttribute(name))))
    const rows = await page.locator('#rows tr').count()
    await svg.hover({ position: { x: x0! + (column + 0.5) * cw!, y: y0! + (rows - 0.5) * rh! } })
    await expect.poll(() => page.locator('#tip').textContent()).toContain(forged)
    const markup = await page.evaluate(`({
      pwned: window.pwned,
      images: document.images.length,
      bold: [...document.querySelectorAll('b')].some(element => element.textContent === 'bold'),
    })`)
    expect(markup).toEqual({ pwned: undefined, images: 0, bold: false })
  })
})
