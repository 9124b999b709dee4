/**
 * The `dsh-seam report` page: one self-contained HTML file (inline CSS, inline script drawing SVG; no network).
 * The model travels as JSON in a `<script type="application/json">` element, every `<` escaped, and the script writes
 * log text with `textContent` only, so nothing a log holds becomes markup.
 * @module @dsh-seam/cli/report-html
 */

import { createHash } from 'node:crypto'
import type { ReportModel } from './report.ts'
import { CELL, COMPOSITION_KEYS } from './report.ts'

/** Requests per map page. */
export const PAGE_ROWS = 200

/** Bars of the token chart: above it, each bar is the largest request of a bucket of consecutive requests. */
const CHART_BARS = 1000

/** Characters (grapheme clusters) of a node's text shown in a hover or a list; the inspector shows all of it. */
const PREVIEW_CHARS = 160

/** Messages the inspector lists at first for one request (a button shows the rest). */
const SHOWN_MESSAGES = 300

/** Characters a JSON text may hold raw but an HTML parser or a script element acts on. */
const HTML_UNSAFE = /[<>&\u2028\u2029]/g

/**
 * @param model - the report model.
 * @returns the model's JSON, safe inside a `<script type="application/json">` element.
 */
function embedded(model: ReportModel): string {
  const nodes = model.nodes.map(node => [node.seq, node.turn, node.role, node.category, node.source, node.text, node.tokens, node.unit ?? -1, node.snapshot ?? '', node.order])
  // The log's path stays out of the page: a shared report would show the user's folders, and the page never uses it.
  const { file: _, ...shown } = model
  const data = { ...shown, nodes, cell: CELL, composition: COMPOSITION_KEYS, pageRows: PAGE_ROWS, chartBars: CHART_BARS, previewChars: PREVIEW_CHARS, shownMessages: SHOWN_MESSAGES }
  return JSON.stringify(data).replace(HTML_UNSAFE, char => `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, '0')}`)
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, char => `&#${char.codePointAt(0) as number};`)
}


/** Bidirectional controls: a session id in the title must not reorder the browser's own text around it. */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

const STYLE = `
*{box-sizing:border-box}
body{font:13px/1.4 system-ui,sans-serif;margin:12px;color:#222;background:#fff;max-width:100%}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:14px 0 6px}h3{font-size:13px;margin:10px 0 4px}
bdi{unicode-bidi:isolate}
.facts span{margin-right:16px;display:inline-block}.facts b{font-weight:600}
.legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border:1px solid #0002}
.c-sent{background:#3b7dd8}.c-required{background:#0b3a82}.c-left{background:#e8e8e8}.c-replaced{background:#d9822b}.c-break{background:#d62728}.c-unit{background:#9467bd}.c-snapshot{background:#e377c2}
.c-header{background:#999}.c-user{background:#2ca02c}.c-assistant{background:#1f77b4}.c-plugin{background:#8c564b}.c-surface{background:#bbb}.c-window{background:#333}
#chart{width:100%;height:170px;display:block}
.workspace{display:grid;grid-template-columns:minmax(0,1fr) minmax(280px,34%);gap:12px;align-items:start}
#side{position:sticky;top:0;max-height:100vh;overflow:auto;border-left:1px solid #ddd;padding-left:10px}
#mapbox{overflow:auto;max-height:78vh;border:1px solid #ccc}
#tip{position:fixed;pointer-events:none;background:#fffffa;border:1px solid #888;padding:6px 8px;max-width:460px;font-size:12px;display:none;white-space:pre-wrap;box-shadow:0 2px 6px #0003;z-index:2}
.pane{white-space:pre-wrap;font:12px/1.4 ui-monospace,monospace;background:#f6f6f6;padding:8px;border:1px solid #ddd;min-height:3em;overflow-wrap:anywhere}
.msg{border-top:1px solid #ddd;padding:4px 0}.msg .who{color:#555}.msg pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0 0;font:12px/1.4 ui-monospace,monospace}
.hit{cursor:pointer;padding:2px 0;border-bottom:1px solid #eee}.hit:hover{background:#ffeeb0}
.tablebox{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;border-bottom:1px solid #eee;text-align:right}th{background:#f3f3f3;position:sticky;top:0}
td.l,th.l{text-align:left}tr.sel{background:#ffeeb0}
.controls{margin:6px 0;display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center}
input[type=number]{width:6em}input[type=search]{width:14em;max-width:100%}
@media (max-width:800px){.workspace{grid-template-columns:minmax(0,1fr)}#side{position:static;max-height:none;border-left:0;padding-left:0}#mapbox{max-height:60vh}}
`

const SCRIPT = `
'use strict'
const D = JSON.parse(document.getElementById('report-data').textContent)
const C = D.cell
const COLORS = { [C.sent]: '#3b7dd8', [C.required]: '#0b3a82', [C.left]: '#e8e8e8', [C.replaced]: '#d9822b' }
const NAMES = { [C.absent]: 'not on the surface yet', [C.sent]: 'sent', [C.required]: 'sent, required by the host', [C.left]: 'left out', [C.replaced]: 'replaced by compaction' }
const CAT = { header: '#999', user: '#2ca02c', assistant: '#1f77b4', tool: '#9467bd', snapshot: '#e377c2', plugin: '#8c564b' }
const SVGNS = 'http://www.w3.org/2000/svg'
const $ = id => document.getElementById(id)
const fmt = n => n === undefined || n === null ? '-' : Number(n).toLocaleString('en-US')
const pct = (a, b) => b ? (a / b * 100).toFixed(1) + '%' : '-'
const node = c => { const n = D.nodes[c]; return { seq: n[0], turn: n[1], role: n[2], category: n[3], source: n[4], text: n[5], tokens: n[6], unit: n[7], snapshot: n[8] } }
const graphemes = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter('en', { granularity: 'grapheme' }) : undefined
function preview(text) {
  if (text.length <= D.previewChars) return text
  if (!graphemes) return text.slice(0, D.previewChars) + '…'
  let out = '', count = 0
  for (const { segment } of graphemes.segment(text.slice(0, D.previewChars * 8))) { if (++count > D.previewChars) return out + '…'; out += segment }
  return out
}
function el(tag, attrs, parent) { const e = document.createElementNS(SVGNS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e }
function h(tag, text, parent, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; if (parent) parent.appendChild(e); return e }
// Text from the log goes in its own isolated element (bdi): its bidirectional controls cannot reorder the page's text.
const L = text => ({ log: String(text) })
function put(parent, parts) { parent.textContent = ''; for (const p of parts) { if (typeof p === 'string') parent.appendChild(document.createTextNode(p)); else h('bdi', p.log, parent) } return parent }
function cellOf(request, c) {
  let lo = 0, hi = request.cells.length - 1
  while (lo <= hi) { const mid = (lo + hi) >> 1, run = request.cells[mid]; if (c < run[0]) hi = mid - 1; else if (c > run[1]) lo = mid + 1; else return run[2] }
  return C.absent
}
// A request's sent nodes in the order it sent them (surface order: a compaction's summary sits where its range was).
function sentColumns(q) { const out = []; for (const [a, b, s] of q.cells) if (s === C.sent || s === C.required) for (let c = a; c <= b; c++) out.push(c); return out.sort((x, y) => D.nodes[x][9] - D.nodes[y][9]) }
const pages = Math.max(1, Math.ceil(D.requests.length / D.pageRows))
const overviewStep = Math.max(1, Math.ceil(D.requests.length / D.pageRows))
let page = 0, zoom = 'fit', pinned = -1, pinnedColumn = -1, overview = false, shown = D.shownMessages
const lowered = []
D.colOf = new Map(D.nodes.map((n, c) => [n[0], c]))

function summary() {
  const r = D.requests, tokens = r.map(x => x.tokens)
  const projected = r.filter(x => x.projectionSeq !== undefined).length
  const reported = r.filter(x => x.reported !== undefined)
  const windows = r.filter(x => x.window !== undefined)
  const facts = [['session', L(D.session)], ['events', fmt(D.events)], ['requests', fmt(r.length)], ['projected', fmt(projected)], ['surface nodes seen', fmt(D.nodes.length)],
    ['compactions', fmt(D.compactions.length)], ['tokens sent (sum)', fmt(tokens.reduce((a, b) => a + b, 0))], ['peak', fmt(Math.max(0, ...tokens))],
    ['peak reported', reported.length === 0 ? 'no usage in the log' : fmt(Math.max(...reported.map(x => x.reported)))],
    ['context window', windows.length === 0 ? 'not in the log' : fmt(windows[windows.length - 1].window)],
    ['over the window', windows.length === 0 ? '-' : fmt(windows.filter(x => x.tokens > x.window).length)]]
  if (D.unreadableCounts > 0) facts.push(['usage figures not drawn (not token counts)', fmt(D.unreadableCounts)])
  const box = $('facts')
  for (const [k, v] of facts) { const s = h('span', k + ': ', box); put(h('b', undefined, s), [v]) }
}

function chart() {
  const svg = $('chart'), width = 1200, height = 160, r = D.requests
  const bucket = Math.max(1, Math.ceil(r.length / D.chartBars)), bars = Math.ceil(r.length / bucket)
  // The scale is what was sent and reported: a whole surface or a window far above it is clipped (its mark at the top),
  // not squashing the bars; a window within twice the peak is drawn to scale.
  const sentMax = Math.max(1, ...r.map(x => Math.max(x.tokens, x.reported ?? 0)))
  const max = Math.max(sentMax, ...r.map(x => x.window !== undefined && x.window <= 2 * sentMax ? x.window : 0))
  const bw = width / Math.max(1, bars), y = v => Math.max(0, height - v / max * height)
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + (height + 14))
  for (let b = 0; b < bars; b++) {
    let best = b * bucket
    for (let i = b * bucket; i < Math.min(r.length, (b + 1) * bucket); i++) if (r[i].tokens > r[best].tokens) best = i
    const q = r[best]
    let top = height
    for (const key of D.composition) {
      const v = q.composition[key]; if (v <= 0) continue
      const hgt = v / max * height; top -= hgt
      el('rect', { x: b * bw, y: top, width: Math.max(bw - 0.3, 0.5), height: hgt, fill: CAT[key], 'data-request': best, 'data-bar': b }, svg)
    }
    el('rect', { x: b * bw, y: y(q.surfaceTokens) - 1, width: Math.max(bw, 1), height: 2, fill: '#bbb', 'data-request': best }, svg)
    if (q.reported !== undefined) el('circle', { cx: b * bw + bw / 2, cy: y(q.reported), r: 1.6, fill: '#d62728', 'data-request': best }, svg)
    if (q.compacted) el('rect', { x: b * bw, y: 0, width: 1, height: height, fill: '#d9822b', 'data-request': best }, svg)
  }
  let from = 0
  for (let i = 1; i <= r.length; i++) {
    if (i < r.length && r[i].window === r[from].window) continue
    if (r[from].window !== undefined) el('rect', { x: from / bucket * bw, y: y(r[from].window), width: (i - from) / bucket * bw, height: 1.2, fill: '#333', 'data-window': r[from].window }, svg)
    from = i
  }
  const label = el('text', { x: 2, y: height + 12, 'font-size': 11, fill: '#555' }, svg)
  const windows = r.filter(x => x.window !== undefined && x.window > max)
  label.textContent = 'scale ' + fmt(max) + ' tokens (sent and reported; a higher whole surface ' + (windows.length ? 'or window, ' + fmt(windows[windows.length - 1].window) + ' tokens, ' : '') + 'is clipped to the top); ' + (bucket > 1 ? 'each bar: the largest of ' + bucket + ' consecutive requests' : 'one bar per request')
}

function rowsShown() {
  if (overview) { const out = []; for (let i = overviewStep - 1; i < D.requests.length + overviewStep - 1; i += overviewStep) out.push(Math.min(i, D.requests.length - 1)); return out }
  const first = page * D.pageRows, out = []
  for (let i = first; i < Math.min(D.requests.length, first + D.pageRows); i++) out.push(i)
  return out
}

function map() {
  const box = $('map'); box.textContent = ''
  const rows = rowsShown(), first = rows[0] ?? 0
  const columns = Math.max(1, D.nodes.length)
  const avail = Math.max(200, $('mapbox').clientWidth - 70)
  const cw = zoom === 'fit' ? Math.min(10, avail / columns) : Number(zoom)
  const rh = Math.max(2, Math.min(10, Math.floor(560 / Math.max(1, rows.length))))
  const x0 = 60, y0 = 22, width = x0 + columns * cw + 4, height = y0 + rows.length * rh + 4
  const svg = el('svg', { width, height, viewBox: '0 0 ' + width + ' ' + height, id: 'mapsvg', 'data-cw': cw, 'data-rh': rh, 'data-x0': x0, 'data-y0': y0, 'data-first': first, 'shape-rendering': 'crispEdges' }, box)
  let turn = -1, start = 0, shade = false
  const band = (from, to) => { el('rect', { x: x0 + from * cw, y: 0, width: (to - from) * cw, height: 9, fill: shade ? '#ddd' : '#f4f4f4' }, svg); shade = !shade }
  for (let c = 0; c <= columns; c++) {
    const t = c < D.nodes.length ? D.nodes[c][1] : -2
    if (t !== turn) { if (turn !== -1) band(start, c); turn = t; start = c }
  }
  for (let c = 0; c < D.nodes.length; c++) {
    const n = D.nodes[c]
    if (n[7] !== -1) el('rect', { x: x0 + c * cw, y: 10, width: Math.max(cw, 0.5), height: 4, fill: n[7] % 2 ? '#9467bd' : '#c5b0d5' }, svg)
    if (n[8] !== '') el('rect', { x: x0 + c * cw, y: 15, width: Math.max(cw, 0.5), height: 4, fill: '#e377c2' }, svg)
  }
  rows.forEach((r, i) => {
    const q = D.requests[r], y = y0 + i * rh
    for (const [a, b, s] of q.cells) el('rect', { x: x0 + a * cw, y, width: (b - a + 1) * cw, height: rh, fill: COLORS[s], 'data-cell': s, 'data-row': r }, svg)
    if (q.cacheBreak !== undefined) { const c = D.colOf.get(q.cacheBreak); if (c !== undefined) el('rect', { x: x0 + c * cw - 1, y, width: 2, height: rh, fill: '#d62728', 'data-break': r }, svg) }
    if (q.compacted) el('rect', { x: 0, y, width: x0 - 4, height: Math.max(1, rh / 3), fill: '#d9822b' }, svg)
    if (rh >= 8 || i % Math.ceil(10 / rh) === 0) { const t = el('text', { x: x0 - 6, y: y + rh, 'font-size': Math.min(10, Math.max(rh, 8)), 'text-anchor': 'end', fill: '#555' }, svg); t.textContent = q.turn + '.' + q.step }
  })
  const at = rows.indexOf(pinned)
  if (at !== -1) el('rect', { x: 0, y: y0 + at * rh, width, height: rh, fill: 'none', stroke: '#000', 'stroke-width': 1, id: 'pinrow', 'pointer-events': 'none' }, svg)
  if (at !== -1 && pinnedColumn !== -1) el('rect', { x: x0 + pinnedColumn * cw - 1, y: y0 + at * rh - 1, width: cw + 2, height: rh + 2, fill: 'none', stroke: '#f0c000', 'stroke-width': 2, 'pointer-events': 'none' }, svg)
  $('page').textContent = overview ? 'overview: every ' + fmt(overviewStep) + 'th request of ' + fmt(D.requests.length) : 'requests ' + fmt(first + 1) + '-' + fmt(first + rows.length) + ' of ' + fmt(D.requests.length) + ' (page ' + (page + 1) + '/' + pages + ')'
  $('pageno').value = page + 1
  const where = e => locate(e, svg, cw, rh, x0, y0, rows)
  svg.addEventListener('mousemove', e => hover(e, where(e)))
  svg.addEventListener('mouseleave', () => { $('tip').style.display = 'none' })
  svg.addEventListener('click', e => { const at = where(e); if (at) select(at.r, at.c) })
  table(rows)
}

function locate(e, svg, cw, rh, x0, y0, rows) {
  const box = svg.getBoundingClientRect(), c = Math.floor((e.clientX - box.left - x0) / cw), i = Math.floor((e.clientY - box.top - y0) / rh)
  if (c < 0 || c >= D.nodes.length || i < 0 || i >= rows.length) return undefined
  return { c, r: rows[i] }
}

/** Since which request a cell has held its state, walking back from request r. */
function since(r, c, s) { let k = r; while (k > 0 && cellOf(D.requests[k - 1], c) === s) k--; return k }

/** Why a node was sent or left out at a request, from what the log knows. */
function why(r, c) {
  const q = D.requests[r], s = cellOf(q, c), n = node(c), k = since(r, c, s), first = D.requests[k]
  const from = k === r ? 'at this request' : 'since request ' + (k + 1) + ' (turn ' + first.turn + ' step ' + first.step + ')'
  if (s === C.left) {
    const rev = q.revision === undefined ? ['the listener (no revision)'] : ['the listener under revision "', L(q.revision), '"']
    const was = first.revision !== q.revision ? ['; request ' + (k + 1) + ' left it out under ', first.revision === undefined ? 'no revision' : L(first.revision)] : []
    const given = (q.reasons || []).find(entry => entry[0] === c)
    return ['why: left out by ', ...rev, ' ' + from, ...was, ...(given ? ['; the policy\\'s reason: ', L(given[1])] : [])]
  }
  if (s === C.replaced) {
    const before = k > 0 ? D.requests[k - 1].seq : -1, by = D.compactions.filter(seq => seq > before && seq < first.seq)
    return ['why: replaced by compaction' + (by.length ? ' (compaction/summary at seq ' + by.join(', ') + ')' : '') + ' ' + from + '; the request sends the compaction\\'s replacement instead']
  }
  if (s === C.required) return ['why: sent, required by the host (the open turn\\'s input, the newest snapshot of its source, the continuing tool unit or the tail) ' + from]
  if (s === C.sent) return ['why: sent, chosen ' + (q.projectionSeq === undefined ? '(no projection: the whole surface) ' : 'by the listener ') + from]
  const appears = D.requests.findIndex(x => cellOf(x, c) !== C.absent)
  return ['why: not on the surface yet: seq ' + n.seq + ' is appended after this request' + (appears === -1 ? '' : '; first on the surface at request ' + (appears + 1))]
}

function describe(r, c, full) {
  const q = D.requests[r], n = node(c), s = cellOf(q, c)
  return ['request ' + (r + 1) + ': turn ' + q.turn + ' step ' + q.step + ' (seq ' + q.seq + ')\\n' +
    'node seq ' + n.seq + ', turn ' + n.turn + ': ' + NAMES[s] + '\\n' +
    'role ' + n.role + ', ' + n.category + ', source ', L(n.source), (n.unit !== -1 ? ', tool unit ' + n.unit : ''), ...(n.snapshot ? [', snapshot of ', L(n.snapshot)] : []), '\\n',
    ...(full ? [...why(r, c), '\\n'] : []), fmt(n.tokens) + ' tokens: ', L(full ? n.text : preview(n.text))]
}

function hover(e, at) {
  const tip = $('tip')
  if (!at) { tip.style.display = 'none'; return }
  put(tip, describe(at.r, at.c, false))
  tip.style.display = 'block'; tip.style.left = Math.min(e.clientX + 14, innerWidth - 300) + 'px'; tip.style.top = (e.clientY + 14) + 'px'
}

function figures(r) {
  const q = D.requests[r]
  return ['request ' + (r + 1) + ': turn ' + q.turn + ' step ' + q.step + ' (seq ' + q.seq + '): sent ' + q.includedNodes + ' of ' + q.surfaceNodes + ' nodes; ' + fmt(q.tokens) + ' tokens of ' + fmt(q.surfaceTokens) + ' for the whole surface' +
    (q.window !== undefined ? '; ' + pct(q.tokens, q.window) + ' of the ' + fmt(q.window) + '-token window' : '') +
    (q.reported !== undefined ? '; provider-reported ' + fmt(q.reported) : '') + '; revision ', q.revision === undefined ? '-' : L(q.revision),
    '; prefix shared with the previous request ' + fmt(q.reusedTokens) + ' tokens' + (q.cacheBreak !== undefined ? ', cache breaks at seq ' + q.cacheBreak : '') + (q.stale ? '; stale seqs ' + q.stale : '') + '\\n' +
    'composition: ' + D.composition.map(k => k + ' ' + fmt(q.composition[k])).join(', ')]
}

function inspector(r) {
  const box = $('inspector'); box.textContent = ''
  const q = D.requests[r], cols = sentColumns(q)
  h('h3', 'Request ' + (r + 1) + ' as sent: ' + cols.length + ' messages', box)
  if (q.header !== -1) {
    const hd = D.headers[q.header], d = h('details', undefined, box)
    h('summary', 'system prompt (' + fmt(hd.system.length) + ' characters) and tools', d)
    put(h('pre', undefined, d, 'pane'), [L(hd.system)]); put(h('pre', undefined, d, 'pane'), [L(hd.tools || 'no tools')])
  }
  for (const c of cols.slice(0, shown)) {
    const n = node(c), m = h('div', undefined, box, 'msg')
    m.id = 'msg-' + n.seq
    put(h('div', undefined, m, 'who'), ['seq ' + n.seq + ' · turn ' + n.turn + ' · ' + n.role + ' · ', L(n.source), ' · ' + fmt(n.tokens) + ' tokens' + (cellOf(q, c) === C.required ? ' · required' : '')])
    put(h('pre', undefined, m), [L(n.text)])
  }
  if (cols.length > shown) { const b = h('button', 'show all ' + cols.length + ' messages', box); b.addEventListener('click', () => { shown = Infinity; inspector(r) }) }
}

function diff(a, b) {
  const box = $('diff'); box.textContent = ''
  if (a < 0 || b < 0 || a >= D.requests.length || b >= D.requests.length) { box.textContent = 'no such request'; return }
  const qa = D.requests[a], qb = D.requests[b], sa = sentColumns(qa), sb = sentColumns(qb)
  const inA = new Set(sa), inB = new Set(sb)
  const added = sb.filter(c => !inA.has(c)), removed = sa.filter(c => !inB.has(c))
  let k = 0; while (k < sa.length && k < sb.length && sa[k] === sb[k]) k++
  const lines = ['request ' + (a + 1) + ' → ' + (b + 1) + ': ' + (qb.tokens - qa.tokens >= 0 ? '+' : '') + fmt(qb.tokens - qa.tokens) + ' tokens; ' + added.length + ' nodes added, ' + removed.length + ' removed; ' +
    (k === sa.length ? 'the prefix holds (request ' + (b + 1) + ' only appends)' : 'the prefix breaks at message ' + (k + 1) + ' (seq ' + D.nodes[sa[k]][0] + ')') + '\\n']
  for (const [sign, list] of [['+', added], ['−', removed]]) for (const c of list.slice(0, 50)) { const n = node(c); lines.push(sign + ' seq ' + n.seq + ' ' + n.role + ' (turn ' + n.turn + '): ', L(preview(n.text)), '\\n') }
  if (added.length + removed.length > 100) lines.push('(the first 50 of each)')
  put(h('div', undefined, box, 'pane'), lines)
}

function search(query) {
  const box = $('hits'); box.textContent = ''
  const q = query.trim().toLocaleLowerCase()
  if (q === '') return
  if (lowered.length === 0) for (const n of D.nodes) lowered.push(n[5].toLocaleLowerCase())
  const matches = []
  for (let c = 0; c < D.nodes.length && matches.length < 100; c++) if (lowered[c].includes(q)) matches.push(c)
  h('div', matches.length === 0 ? 'no node holds that text' : matches.length + (matches.length === 100 ? '+' : '') + ' nodes hold it; click one to go to the first request that left it out (else the last that sent it)', box)
  for (const c of matches) {
    let sent = 0, left = 0, firstLeft = -1, lastSent = -1
    D.requests.forEach((x, r) => { const s = cellOf(x, c); if (s === C.sent || s === C.required) { sent++; lastSent = r } else if (s === C.left || s === C.replaced) { left++; if (firstLeft === -1) firstLeft = r } })
    const n = node(c), hit = h('div', undefined, box, 'hit')
    put(hit, ['seq ' + n.seq + ' (turn ' + n.turn + ', ' + n.role + '): sent by ' + sent + ' requests, dropped by ' + left + (firstLeft === -1 ? '' : ' from request ' + (firstLeft + 1)) + ': ', L(preview(n.text))])
    hit.addEventListener('click', () => select(firstLeft !== -1 ? firstLeft : Math.max(0, lastSent), c))
  }
}

function table(rows) {
  const body = $('rows'); body.textContent = ''
  for (const r of rows) {
    const q = D.requests[r], tr = h('tr', undefined, body); tr.id = 'req-' + r
    if (r === pinned) tr.className = 'sel'
    const cells = [r + 1, q.turn, q.step, q.seq, q.includedNodes + '/' + q.surfaceNodes, fmt(q.tokens), q.window === undefined ? '-' : pct(q.tokens, q.window), fmt(q.surfaceTokens), fmt(q.reported), fmt(q.reusedTokens),
      q.cacheBreak === undefined ? '-' : q.cacheBreak, q.stale || '-', q.compacted ? 'yes' : '-']
    for (const v of cells) h('td', String(v), tr)
    const comp = h('td', undefined, tr, 'l'), bar = el('svg', { width: 120, height: 9 }, comp)
    let x = 0
    for (const k of D.composition) { const w = q.composition[k] / Math.max(1, q.tokens) * 120; if (w > 0) el('rect', { x, y: 0, width: w, height: 9, fill: CAT[k] }, bar); x += w }
    put(h('td', undefined, tr, 'l'), [q.revision === undefined ? '-' : L(q.revision)])
    tr.addEventListener('click', () => select(r))
  }
}

/** Select a request (and a node): the map keeps its place, the side pane shows the request, why, and the diff with the one before. */
function select(r, c) {
  if (!(r >= 0 && r < D.requests.length)) return
  pinned = r; pinnedColumn = c === undefined ? -1 : c; shown = D.shownMessages
  const p = Math.floor(r / D.pageRows)
  if (!overview && p !== page) page = p
  map()
  put($('detail'), c === undefined ? figures(r) : [...describe(r, c, true), '\\n\\n', ...figures(r)])
  inspector(r)
  $('compare').value = r
  diff(r - 1, r)
  const fragment = '#request=' + (r + 1) + (c === undefined ? '' : '&node=' + D.nodes[c][0])
  if (location.hash !== fragment) try { history.replaceState(null, '', fragment) } catch { /* a file: URL may refuse: the selection stands */ }
}

/** Go to a request by number, turn or seq: #request=N, #turn=T, #seq=S (a node's seq selects it in the newest request that has it on the surface, else the request at that seq). */
function go(kind, value) {
  const v = Number(value), R = D.requests
  if (!Number.isSafeInteger(v)) return false
  if (kind === 'request') { if (v < 1 || v > R.length) return false; select(v - 1); return true }
  if (kind === 'turn') { const r = R.findIndex(q => q.turn === v); if (r === -1) return false; select(r); return true }
  const c = D.colOf.get(v)
  if (c !== undefined) {
    let r = pinned >= 0 && cellOf(R[pinned], c) !== C.absent ? pinned : -1
    if (r === -1) for (let i = R.length - 1; i >= 0; i--) if (cellOf(R[i], c) === C.sent || cellOf(R[i], c) === C.required || cellOf(R[i], c) === C.left) { r = i; break }
    if (r !== -1) { select(r, c); return true }
  }
  let r = R.findIndex(q => q.seq >= v); if (r === -1) r = R.length - 1
  if (r === -1) return false
  select(r); return true
}

function fromFragment() {
  const params = new URLSearchParams(location.hash.slice(1))
  const request = params.get('request'), nodeSeq = params.get('node')
  if (request !== null && nodeSeq !== null) { const c = D.colOf.get(Number(nodeSeq)); if (c !== undefined && Number(request) >= 1) { select(Number(request) - 1, c); return } }
  for (const kind of ['request', 'turn', 'seq']) if (params.get(kind) !== null) { go(kind, params.get(kind)); return }
}

function next(test) { for (let r = Math.max(0, pinned + 1); r < D.requests.length; r++) if (test(D.requests[r])) { select(r); return } $('navnote').textContent = 'none after request ' + (pinned + 1) }

// simulate --report: the same map under each policy, the recorded selection first.
const RECORDED = D.requests
if (D.variants && D.variants.length > 0) {
  const pick = $('variant')
  for (const [i, name] of [[-1, 'recorded'], ...D.variants.map((v, i) => [i, v.name])]) { const o = h('option', undefined, pick); o.value = i; put(o, [L(name)]) }
  pick.parentElement.hidden = false
  pick.addEventListener('change', () => {
    D.requests = pick.value === '-1' ? RECORDED : D.variants[Number(pick.value)].requests
    $('facts').textContent = ''; $('chart').textContent = ''
    summary(); chart(); map()
    if (pinned >= 0) select(pinned, pinnedColumn === -1 ? undefined : pinnedColumn)
  })
}
$('chart').addEventListener('click', e => { const i = e.target.getAttribute('data-request'); if (i !== null) select(Number(i)) })
summary(); chart(); map()
$('prev').addEventListener('click', () => { if (page > 0) { page--; map() } })
$('next').addEventListener('click', () => { if (page < pages - 1) { page++; map() } })
$('pageno').addEventListener('change', e => { const p = Number(e.target.value) - 1; if (p >= 0 && p < pages) { page = p; overview = false; $('overview').checked = false; map() } })
$('overview').addEventListener('change', e => { overview = e.target.checked; map() })
$('zoom').addEventListener('change', e => { zoom = e.target.value; map() })
$('goform').addEventListener('submit', e => { e.preventDefault(); $('navnote').textContent = go($('gokind').value, $('goto').value) ? '' : 'no such ' + $('gokind').value })
$('nextbreak').addEventListener('click', () => next(q => q.cacheBreak !== undefined))
$('nextcompaction').addEventListener('click', () => next(q => q.compacted))
$('searchform').addEventListener('submit', e => { e.preventDefault(); search($('search').value) })
$('compareform').addEventListener('submit', e => { e.preventDefault(); diff(Number($('compare').value) - 1, pinned) })
addEventListener('hashchange', fromFragment)
fromFragment()
`

/** `'sha256-…'` of an inline element's text, for the page's Content-Security-Policy. */
function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`
}

/**
 * @param model - the report model.
 * @returns the page: facts, the token chart, the map (paginated or as an overview, zoomable) beside the selected
 * request (why a node was sent or left out, the request's messages, the diff with another request), search, go-to,
 * and the request table. Its Content-Security-Policy allows exactly its own inline style and script (by hash).
 */
export function reportHtml(model: ReportModel): string {
  const legend = [['sent', 'sent'], ['required', 'sent, required by the host'], ['left', 'left out'], ['replaced', 'replaced by compaction'], ['break', 'cache break'], ['unit', 'tool unit'], ['snapshot', 'runtime-context snapshot']]
  const categories = [['header', 'system prompt and tools'], ['user', 'user'], ['assistant', 'assistant'], ['unit', 'tool results'], ['snapshot', 'snapshots'], ['plugin', 'other plugin messages'], ['surface', 'whole surface'], ['break', 'provider-reported'], ['window', 'context window']]
  const swatches = (items: string[][]): string => items.map(([kind, name]) => `<span><i class="c-${kind}"></i>${name}</span>`).join('')
  const csp = `default-src 'none'; style-src ${cspHash(STYLE)}; script-src ${cspHash(SCRIPT)}; img-src data:; base-uri 'none'; form-action 'none'`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>dsh-seam report: ${escapeHtml(model.session.replace(BIDI_CONTROLS, ''))}</title><style>${STYLE}</style></head>
<body>
<h1>dsh-seam report</h1>
<label class="controls" hidden>selection <select id="variant"></select> (simulate: each policy replayed on this log)</label>
<div class="facts" id="facts"></div>
<h2>Tokens per request (DSH token meter, by category)</h2>
<div class="legend">${swatches(categories)}</div>
<svg id="chart" preserveAspectRatio="none"></svg>
<form class="controls" id="goform"><label>go to <select id="gokind"><option value="request">request</option><option value="turn">turn</option><option value="seq">seq</option></select></label><input id="goto" type="number" min="0"><button>go</button>
<button type="button" id="nextbreak">next cache break</button><button type="button" id="nextcompaction">next compaction</button><span id="navnote"></span></form>
<form class="controls" id="searchform"><label>search text <input id="search" type="search" placeholder="a name, a fact…"></label><button>search</button></form>
<div id="hits"></div>
<h2>Map: requests (rows) × surface nodes (columns, by seq, grouped by turn)</h2>
<div class="legend">${swatches(legend)}</div>
<div class="controls"><button id="prev">◀ previous</button><button id="next">next ▶</button><label>page <input id="pageno" type="number" min="1" max="${Math.max(1, Math.ceil(model.requests.length / PAGE_ROWS))}"></label><span id="page"></span>
<label><input id="overview" type="checkbox"> whole session (every nth request)</label>
<label>node width <select id="zoom"><option value="fit">fit</option><option value="2">2 px</option><option value="4">4 px</option><option value="8">8 px</option><option value="16">16 px</option></select></label></div>
<div class="workspace"><div id="mapbox"><div id="map"></div></div>
<aside id="side"><h2>Selected</h2><div id="detail" class="pane">Hover a cell for its node; click to keep it here with why it was sent or left out.</div>
<h3>Diff</h3><form class="controls" id="compareform"><label>request <input id="compare" type="number" min="1"></label><button>compare with the selected</button></form><div id="diff"></div>
<div id="inspector"></div></aside></div>
<h2>Requests of this page</h2>
<div class="tablebox"><table><thead><tr><th>#</th><th>turn</th><th>step</th><th>seq</th><th>sent/surface</th><th>tokens</th><th>% of window</th><th>surface tokens</th><th>reported</th><th>shared prefix</th><th>cache break</th><th>stale</th><th>compacted</th><th class="l">composition</th><th class="l">revision</th></tr></thead><tbody id="rows"></tbody></table></div>
<div id="tip"></div>
<script type="application/json" id="report-data">${embedded(model)}</script>
<script>${SCRIPT}</script>
</body></html>
`
}
