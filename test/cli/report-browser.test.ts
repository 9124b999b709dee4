/**
 * `dsh-seam report` in a real browser: the page a compacted, projected session produces opens in headless Chromium
 * (Debian's `chromium`, driven by `playwright-core`; nothing is downloaded), every map cell on screen says what the
 * log's projections say about that node, the demo's managed session is drawn as `inspect` reports it, hovering shows log text as text, and a screenshot is written to `out/`.
 * Without a Chromium the suite is skipped with one printed line.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { readSessionLog, replayRequests } from '@dsh-seam/agent-context'
import type { RequestSummary } from '@dsh-seam/cli'
import { CELL, EXIT, loadPolicy, meterPricer, simulate } from '@dsh-seam/cli'
import { bootLoop, conversationReply, keepLastNodes, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import type { Browser, Page } from 'playwright-core'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compactedSession, managedDemoSession, rewriteEvent, runCli, selected, surfaceBefore } from './support.ts'

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

/** Content-Security-Policy refusals the open pages reported: the page's own script and style must never be one. */
const refused: string[] = []

async function open(path: string, fragment = '', viewport = { width: 1400, height: 1600 }): Promise<Page> {
  browser ??= await chromium.launch({ executablePath: executable as string, headless: true, args: ['--no-sandbox'] })
  const page = await browser.newPage({ viewport })
  const requests: string[] = []
  page.on('request', request => { if (!request.url().startsWith('file:')) requests.push(request.url()) })
  page.on('console', message => { if (message.text().includes('Content Security Policy')) refused.push(message.text()) })
  page.on('pageerror', error => { refused.push(`page error: ${error.message}`) })
  await page.goto(`file://${path}${fragment}`)
  await page.locator('#mapsvg').waitFor()
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

/** Requests' sent columns (seqs) and cells from the log, as `expectedCells` computes them. */
function sentSeqs(events: readonly SessionEvent[]): number[][] {
  const { columns, rows } = expectedCells(events)
  return rows.map(row => columns.filter(seq => row.get(seq) === CELL.sent))
}

/** In the page: the x position of each character of `word` in the first text node of `#detail` holding `word`. */
const CHARACTER_XS = (word: string): string => `(() => {
  const walker = document.createTreeWalker(document.getElementById('detail'), NodeFilter.SHOW_TEXT)
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    const at = text.data.indexOf(${JSON.stringify(word)})
    if (at === -1) continue
    return [...${JSON.stringify(word)}].map((_, i) => { const range = document.createRange(); range.setStart(text, at + i); range.setEnd(text, at + i + 1); return range.getBoundingClientRect().left })
  }
  return []
})()`

describe.skipIf(executable === undefined)('answering "why did my agent forget X" in Chromium', () => {
  let log: string
  let events: SessionEvent[]
  let html: string
  let inspected: RequestSummary[]

  beforeAll(async () => {
    const run = await compactedSession(join(root, 'debug'))
    log = sessionLogPath(run.loop, run.agent)
    events = (await readSessionLog(log)).events
    html = join(root, 'debug.html')
    expect(runCli('report', log, '-o', html).status).toBe(EXIT.ok)
    inspected = (JSON.parse(runCli('inspect', log, '--json').stdout) as { requests: RequestSummary[] }).requests
  })

  afterAll(() => { expect(refused).toEqual([]) })

  it('the inspector shows a request\'s exact messages in full, with its system prompt and tools', async () => {
    const largest = inspected.reduce((best, request, i) => request.tokens > (inspected[best] as RequestSummary).tokens ? i : best, 0)
    const page = await open(html, `#request=${largest + 1}`)
    const request = replayRequests(events)[largest]!
    const shown = await page.evaluate(`[...document.querySelectorAll('#inspector .msg')].map(m => ({ id: m.id, text: m.querySelector('pre').textContent }))`) as { id: string; text: string }[]
    const surface = surfaceBefore(events, request.seq)
    const order = request.projection === undefined ? surface : selected(surface, request.projection.include)
    expect(shown.map(m => m.id)).toEqual(order.map(seq => `msg-${seq}`))
    expect(order).not.toEqual([...order].sort((a, b) => a - b))
    expect(shown).toHaveLength(request.messages.length)
    const texts = request.messages.map(message => message.content.flatMap(block => block.type === 'text' ? [block.text] : []).join('\n'))
    const long = texts.findIndex(text => text.length > 1000)
    expect(long).toBeGreaterThan(-1)
    expect(shown[long]!.text).toBe(texts[long])
    expect(await page.locator('#inspector details pre').first().textContent()).toBe(request.header?.system)
    expect(page.url()).toMatch(new RegExp(`#request=${largest + 1}$`))
  })

  it('a click keeps the map in place and says why the node was left out and since when; the diff names what changed', async () => {
    const page = await open(html)
    await page.selectOption('#zoom', '8')
    const sent = sentSeqs(events)
    const { columns, rows } = expectedCells(events)
    const r = rows.length - 1
    const c = columns.findIndex(seq => rows[r]!.get(seq) === CELL.left)
    let since = r
    while (since > 0 && rows[since - 1]!.get(columns[c]!) === CELL.left) since--
    const svg = page.locator('#mapsvg')
    await svg.scrollIntoViewIfNeeded()
    const [x0, y0, cw, rh] = await Promise.all(['data-x0', 'data-y0', 'data-cw', 'data-rh'].map(async name => Number(await svg.getAttribute(name))))
    const before = await page.evaluate('scrollY') as number
    await svg.click({ position: { x: x0! + (c + 0.5) * cw!, y: y0! + (r + 0.5) * rh! } })
    expect(await page.evaluate('scrollY')).toBe(before)
    const detail = await page.locator('#detail').textContent()
    expect(detail).toContain(`node seq ${columns[c]}`)
    expect(detail).toContain(`why: left out by the listener under revision "${inspected[r]!.revision}" ${since === r ? 'at this request' : `since request ${since + 1}`}`)
    const box = await page.locator('#detail').boundingBox()
    expect(box!.y).toBeGreaterThanOrEqual(0)
    expect(box!.y + box!.height).toBeLessThanOrEqual(1600)
    expect(page.url()).toMatch(new RegExp(`#request=${r + 1}&node=${columns[c]}$`))
    const [a, b] = [sent[r - 1]!, sent[r]!]
    const added = b.filter(seq => !a.includes(seq)).length
    const removed = a.filter(seq => !b.includes(seq)).length
    const delta = inspected[r]!.tokens - inspected[r - 1]!.tokens
    expect(await page.locator('#diff').textContent()).toContain(`request ${r} → ${r + 1}: ${delta >= 0 ? '+' : ''}${delta.toLocaleString('en-US')} tokens; ${added} nodes added, ${removed} removed; `)
    await page.fill('#compare', '1')
    await page.click('#compareform button')
    expect(await page.locator('#diff').textContent()).toContain(`request 1 → ${r + 1}: `)
    const replaced = columns.findIndex(seq => rows[r]!.get(seq) === CELL.replaced)
    await svg.click({ position: { x: x0! + (replaced + 0.5) * cw!, y: y0! + (r + 0.5) * rh! } })
    expect(await page.locator('#detail').textContent()).toMatch(/why: replaced by compaction \(compaction\/summary at seq \d+(, \d+)*\) since request \d+ \(turn \d+ step \d+\); the request sends the compaction's replacement instead/)
  })

  it('goes to a turn, a seq, the next compaction and the next cache break, by form and by URL fragment', async () => {
    const page = await open(html)
    const selectedRow = async (): Promise<number> => Number(await page.locator('#rows tr.sel td').first().textContent())
    await page.selectOption('#gokind', 'turn')
    await page.fill('#goto', '5')
    await page.click('#goform button[type=submit], #goform button:not([type])')
    expect(await selectedRow()).toBe(inspected.findIndex(request => request.turn === 5) + 1)
    const compacted = (JSON.parse(runCli('report', log, '-o', join(root, 'nav.html'), '--json').stdout) as { requests: { compacted: boolean; cacheBreak?: number }[] }).requests
    const from = await selectedRow()
    await page.click('#nextcompaction')
    expect(await selectedRow()).toBe(compacted.findIndex((request, i) => i >= from && request.compacted) + 1)
    const now = await selectedRow()
    await page.click('#nextbreak')
    expect(await selectedRow()).toBe(compacted.findIndex((request, i) => i >= now && request.cacheBreak !== undefined) + 1)
    const seq = expectedCells(events).columns[3]!
    const byFragment = await open(html, `#seq=${seq}`)
    expect(await byFragment.locator('#detail').textContent()).toContain(`node seq ${seq},`)
  })

  it('fits a phone: nothing wider than its 390 px screen but the map, which scrolls in its box', async () => {
    const page = await open(html, '#request=3', { width: 390, height: 844 })
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    expect(await page.locator('#inspector .msg').count()).toBeGreaterThan(0)
  })

  it('search finds the requests that sent or dropped a text; a right-to-left override in a revision reorders nothing after it', async () => {
    const loop = await bootLoop(await patchedDsh(), { persistRoot: join(root, 'bidi'), fallback: conversationReply() })
    const agent = loop.create('bidi')
    const revision = 'evil\u202Erevision'
    agent.ctx.on('agent/context', keepLastNodes(2, revision))
    for (const text of ['first', 'The secret word is Marmalade.', 'third', 'fourth', 'fifth']) await loop.say(agent, text)
    await loop.ctx.sessions.flush(agent.session)
    const path = sessionLogPath(loop, agent)
    const bidi = join(root, 'bidi.html')
    expect(runCli('report', path, '-o', bidi).status).toBe(EXIT.ok)
    const page = await open(bidi)
    await page.fill('#search', 'MARMALADE')
    await page.click('#searchform button')
    const bidiEvents = (await readSessionLog(path)).events
    const { columns, rows } = expectedCells(bidiEvents)
    const seq = columns.find(s => JSON.stringify(bidiEvents[s]).includes('Marmalade'))!
    const sentBy = rows.filter(row => row.get(seq) === CELL.sent).length
    const firstDropped = rows.findIndex(row => row.get(seq) === CELL.left || row.get(seq) === CELL.replaced)
    const droppedBy = rows.filter(row => row.get(seq) === CELL.left || row.get(seq) === CELL.replaced).length
    const hit = page.locator('#hits .hit')
    expect(await hit.count()).toBe(1)
    expect(await hit.textContent()).toBe(`seq ${seq} (turn 2, user): sent by ${sentBy} requests, dropped by ${droppedBy} from request ${firstDropped + 1}: The secret word is Marmalade.`)
    await hit.click()
    expect(page.url()).toMatch(new RegExp(`#request=${firstDropped + 1}&node=${seq}$`))
    expect(await page.locator('#detail').textContent()).toContain(`why: left out by the listener under revision "${revision}" at this request`)
    // Our own words after the revision still read left to right; the same text without isolation is reordered.
    const xs = await page.evaluate(CHARACTER_XS('prefix')) as number[]
    expect(xs).toHaveLength(6)
    expect(xs).toEqual([...xs].sort((a, b) => a - b))
    const control = await page.evaluate(`(() => { const d = document.createElement('div'); d.textContent = 'revision ${revision}; prefix shared'; document.body.prepend(d)
      const t = d.firstChild, at = t.data.indexOf('prefix'), x = i => { const r = document.createRange(); r.setStart(t, at + i); r.setEnd(t, at + i + 1); return r.getBoundingClientRect().left }
      return [x(0), x(5)] })()`) as [number, number]
    expect(control[0]).toBeGreaterThan(control[1])
  })

  it('simulate --report draws each policy on the recorded map, and says the reason the policy gave', async () => {
    const module = join(root, 'reasons.mjs')
    writeFileSync(module, `export const name = 'last-5'
export function createListener() {
  return ({ nodes }) => ({ include: nodes.slice(-5).map(n => n.seq), revision: 'last-5', reasons: Object.fromEntries(nodes.slice(0, -5).map(n => [n.seq, 'older than the last 5'])) })
}
`)
    const html = join(root, 'variants.html')
    expect(runCli('simulate', log, '--policy', module, '--report', html).status).toBe(EXIT.ok)
    const { header } = await readSessionLog(log)
    const { pricer, dispose } = await meterPricer()
    const simulated = (await simulate(header, events, [await loadPolicy(module)], { pricer, keepRequests: true })).requests[0]!
    await dispose()
    const page = await open(html)
    await page.selectOption('#variant', '0')
    const drawn = await drawnCells(page)
    expect(drawn.rows.map(row => row.filter(cell => cell === CELL.sent || cell === CELL.required).length)).toEqual(simulated.map(request => request.include.length))
    const r = simulated.length - 1
    const c = drawn.rows[r]!.indexOf(CELL.left)
    const svg = page.locator('#mapsvg')
    const [x0, y0, cw, rh] = await Promise.all(['data-x0', 'data-y0', 'data-cw', 'data-rh'].map(async name => Number(await svg.getAttribute(name))))
    await svg.click({ position: { x: x0! + (c + 0.5) * cw!, y: y0! + (r + 0.5) * rh! } })
    expect(await page.locator('#detail').textContent()).toContain('why: left out by the listener under revision "last-5"')
    expect(await page.locator('#detail').textContent()).toContain('the policy\'s reason: older than the last 5')
  })

  it('draws a log whose usage holds 1e308 or a string without NaN and without widening the page', async () => {
    const usage = events.find(event => event.type === 'assistant/message')!.seq
    for (const inputTokens of [1e308, '512']) {
      const broken = join(root, `usage-${typeof inputTokens}.jsonl`)
      writeFileSync(broken, readFileSync(log))
      rewriteEvent(log, broken, usage, event => ({ ...event, data: { ...event['data'] as object, usage: { inputTokens, outputTokens: 1 } } }))
      const page = join(root, `usage-${typeof inputTokens}.html`)
      expect(runCli('report', broken, '-o', page).status).toBe(EXIT.ok)
      const opened = await open(page)
      expect(await opened.evaluate(`document.getElementById('chart').innerHTML.includes('NaN') || document.getElementById('facts').textContent.includes('NaN')`)).toBe(false)
      expect(await opened.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1400)
    }
  })
})
