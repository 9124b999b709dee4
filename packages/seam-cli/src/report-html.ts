/**
 * The `dsh-seam report` page: one self-contained HTML file (inline CSS, inline script drawing SVG; no network).
 * The model travels as JSON in a `<script type="application/json">` element, every `<` escaped, and the script writes
 * log text with `textContent` only, so nothing a log holds becomes markup.
 * @module @dsh-seam/cli/report-html
 */

import type { ReportModel } from './report.ts'
import { CELL, COMPOSITION_KEYS } from './report.ts'

/** Requests per map page. */
export const PAGE_ROWS = 200

/** Bars of the token chart: above it, each bar is the largest request of a bucket of consecutive requests. */
const CHART_BARS = 1000

/** Characters a JSON text may hold raw but an HTML parser or a script element acts on. */
const HTML_UNSAFE = /[<>&\u2028\u2029]/g

/**
 * @param model - the report model.
 * @returns the model's JSON, safe inside a `<script type="application/json">` element.
 */
function embedded(model: ReportModel): string {
  const nodes = model.nodes.map(node => [node.seq, node.turn, node.role, node.category, node.source, node.preview, node.tokens, node.unit ?? -1, node.snapshot ?? ''])
  const data = { ...model, nodes, cell: CELL, composition: COMPOSITION_KEYS, pageRows: PAGE_ROWS, chartBars: CHART_BARS }
  return JSON.stringify(data).replace(HTML_UNSAFE, char => `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, '0')}`)
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, char => `&#${char.codePointAt(0) as number};`)
}

const STYLE = `
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px}
.facts span{margin-right:16px}.facts b{font-weight:600}
.legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border:1px solid #0002}
#mapbox{overflow:auto;max-height:78vh;border:1px solid #ccc}
#tip{position:fixed;pointer-events:none;background:#fffffa;border:1px solid #888;padding:6px 8px;max-width:460px;font-size:12px;display:none;white-space:pre-wrap;box-shadow:0 2px 6px #0003;z-index:2}
#detail{white-space:pre-wrap;font:12px/1.4 ui-monospace,monospace;background:#f6f6f6;padding:8px;border:1px solid #ddd;min-height:3em}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;border-bottom:1px solid #eee;text-align:right}th{background:#f3f3f3;position:sticky;top:0}
td.l,th.l{text-align:left}tr.sel{background:#ffeeb0}
.controls{margin:6px 0}.controls>*{margin-right:10px}
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
const node = c => { const n = D.nodes[c]; return { seq: n[0], turn: n[1], role: n[2], category: n[3], source: n[4], preview: n[5], tokens: n[6], unit: n[7], snapshot: n[8] } }
function el(tag, attrs, parent) { const e = document.createElementNS(SVGNS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e }
function h(tag, text, parent, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; if (parent) parent.appendChild(e); return e }
function cellOf(request, c) {
  let lo = 0, hi = request.cells.length - 1
  while (lo <= hi) { const mid = (lo + hi) >> 1, run = request.cells[mid]; if (c < run[0]) hi = mid - 1; else if (c > run[1]) lo = mid + 1; else return run[2] }
  return C.absent
}
const pages = Math.max(1, Math.ceil(D.requests.length / D.pageRows))
let page = 0, zoom = 'fit', pinned = -1

function summary() {
  const r = D.requests, tokens = r.map(x => x.tokens)
  const projected = r.filter(x => x.projectionSeq !== undefined).length
  const reported = r.filter(x => x.reported !== undefined)
  const facts = [['session', D.session], ['events', fmt(D.events)], ['requests', fmt(r.length)], ['projected', fmt(projected)], ['surface nodes seen', fmt(D.nodes.length)],
    ['compactions', fmt(D.compactions.length)], ['tokens sent (sum)', fmt(tokens.reduce((a, b) => a + b, 0))], ['peak', fmt(Math.max(0, ...tokens))],
    ['peak reported', reported.length === 0 ? 'no usage in the log' : fmt(Math.max(...reported.map(x => x.reported)))]]
  const box = $('facts')
  for (const [k, v] of facts) { const s = h('span', k + ': ', box); h('b', v, s) }
}

function chart() {
  const svg = $('chart'), width = 1200, height = 160, r = D.requests
  const bucket = Math.max(1, Math.ceil(r.length / D.chartBars)), bars = Math.ceil(r.length / bucket)
  const max = Math.max(1, ...r.map(x => Math.max(x.surfaceTokens, x.reported ?? 0)))
  const bw = width / Math.max(1, bars), y = v => height - v / max * height
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + (height + 14))
  for (let b = 0; b < bars; b++) {
    let best = b * bucket
    for (let i = b * bucket; i < Math.min(r.length, (b + 1) * bucket); i++) if (r[i].tokens > r[best].tokens) best = i
    const q = r[best]
    let top = height
    for (const key of D.composition) {
      const v = q.composition[key]; if (v <= 0) continue
      const hgt = v / max * height; top -= hgt
      el('rect', { x: b * bw, y: top, width: Math.max(bw - 0.3, 0.5), height: hgt, fill: CAT[key], 'data-request': best }, svg)
    }
    el('rect', { x: b * bw, y: y(q.surfaceTokens) - 1, width: Math.max(bw, 1), height: 2, fill: '#bbb' }, svg)
    if (q.reported !== undefined) el('circle', { cx: b * bw + bw / 2, cy: y(q.reported), r: 1.6, fill: '#d62728' }, svg)
    if (q.compacted) el('rect', { x: b * bw, y: 0, width: 1, height: height, fill: '#d9822b' }, svg)
  }
  const label = el('text', { x: 2, y: height + 12, 'font-size': 11, fill: '#555' }, svg)
  label.textContent = 'peak ' + fmt(max) + ' tokens; ' + (bucket > 1 ? 'each bar: the largest of ' + bucket + ' consecutive requests' : 'one bar per request')
  svg.addEventListener('click', e => { const i = e.target.getAttribute('data-request'); if (i !== null) select(Number(i)) })
}

function map() {
  const box = $('map'); box.textContent = ''
  const first = page * D.pageRows, rows = D.requests.slice(first, first + D.pageRows)
  const columns = Math.max(1, D.nodes.length)
  const avail = Math.max(400, $('mapbox').clientWidth - 80)
  const cw = zoom === 'fit' ? Math.min(10, avail / columns) : Number(zoom)
  const rh = Math.max(2, Math.min(10, Math.floor(560 / Math.max(1, rows.length))))
  const x0 = 60, y0 = 22, width = x0 + columns * cw + 4, height = y0 + rows.length * rh + 4
  const svg = el('svg', { width, height, viewBox: '0 0 ' + width + ' ' + height, id: 'mapsvg', 'data-cw': cw, 'data-rh': rh, 'data-x0': x0, 'data-y0': y0, 'data-first': first, 'shape-rendering': 'crispEdges' }, box)
  let turn = -1, start = 0, shade = false
  const band = (from, to, t) => {
    el('rect', { x: x0 + from * cw, y: 0, width: (to - from) * cw, height: 9, fill: shade ? '#ddd' : '#f4f4f4' }, svg)
    shade = !shade
  }
  for (let c = 0; c <= columns; c++) {
    const t = c < D.nodes.length ? D.nodes[c][1] : -2
    if (t !== turn) { if (turn !== -1) band(start, c, turn); turn = t; start = c }
  }
  for (let c = 0; c < D.nodes.length; c++) {
    const n = D.nodes[c]
    if (n[7] !== -1) el('rect', { x: x0 + c * cw, y: 10, width: Math.max(cw, 0.5), height: 4, fill: n[7] % 2 ? '#9467bd' : '#c5b0d5' }, svg)
    if (n[8] !== '') el('rect', { x: x0 + c * cw, y: 15, width: Math.max(cw, 0.5), height: 4, fill: '#e377c2' }, svg)
  }
  rows.forEach((q, i) => {
    const y = y0 + i * rh
    for (const [a, b, s] of q.cells) el('rect', { x: x0 + a * cw, y, width: (b - a + 1) * cw, height: rh, fill: COLORS[s], 'data-cell': s, 'data-row': first + i }, svg)
    if (q.cacheBreak !== undefined) { const c = D.colOf.get(q.cacheBreak); if (c !== undefined) el('rect', { x: x0 + c * cw - 1, y, width: 2, height: rh, fill: '#d62728', 'data-break': first + i }, svg) }
    if (q.compacted) el('rect', { x: 0, y, width: x0 - 4, height: Math.max(1, rh / 3), fill: '#d9822b' }, svg)
    if (rh >= 8 || i % Math.ceil(10 / rh) === 0) { const t = el('text', { x: x0 - 6, y: y + rh, 'font-size': Math.min(10, Math.max(rh, 8)), 'text-anchor': 'end', fill: '#555' }, svg); t.textContent = q.turn + '.' + q.step }
  })
  $('page').textContent = 'requests ' + fmt(first + 1) + '-' + fmt(first + rows.length) + ' of ' + fmt(D.requests.length) + ' (page ' + (page + 1) + '/' + pages + ')'
  svg.addEventListener('mousemove', e => hover(e, svg, cw, rh, x0, y0, first, rows.length))
  svg.addEventListener('mouseleave', () => { $('tip').style.display = 'none' })
  svg.addEventListener('click', e => { const at = locate(e, svg, cw, rh, x0, y0, first, rows.length); if (at) { select(at.r); detail(at.r, at.c) } })
  table(first, rows)
}

function locate(e, svg, cw, rh, x0, y0, first, count) {
  const box = svg.getBoundingClientRect(), c = Math.floor((e.clientX - box.left - x0) / cw), r = Math.floor((e.clientY - box.top - y0) / rh)
  if (c < 0 || c >= D.nodes.length || r < 0 || r >= count) return undefined
  return { c, r: first + r }
}

function describe(r, c) {
  const q = D.requests[r], n = node(c), s = cellOf(q, c)
  return 'request ' + (r + 1) + ': turn ' + q.turn + ' step ' + q.step + ' (seq ' + q.seq + ')\\n' +
    'node seq ' + n.seq + ', turn ' + n.turn + ': ' + NAMES[s] + '\\n' +
    'role ' + n.role + ', ' + n.category + ', source ' + n.source + (n.unit !== -1 ? ', tool unit ' + n.unit : '') + (n.snapshot ? ', snapshot of ' + n.snapshot : '') + '\\n' +
    fmt(n.tokens) + ' tokens: ' + n.preview
}

function hover(e, svg, cw, rh, x0, y0, first, count) {
  const at = locate(e, svg, cw, rh, x0, y0, first, count), tip = $('tip')
  if (!at) { tip.style.display = 'none'; return }
  tip.textContent = describe(at.r, at.c)
  tip.style.display = 'block'; tip.style.left = (e.clientX + 14) + 'px'; tip.style.top = (e.clientY + 14) + 'px'
}

function detail(r, c) {
  const q = D.requests[r]
  const lines = [describe(r, c), '', 'request figures: sent ' + q.includedNodes + ' of ' + q.surfaceNodes + ' nodes; ' + fmt(q.tokens) + ' tokens of ' + fmt(q.surfaceTokens) + ' for the whole surface' +
    (q.reported !== undefined ? '; provider-reported ' + fmt(q.reported) : '') + '; revision ' + (q.revision === undefined ? '-' : JSON.stringify(q.revision)) +
    '; prefix shared with the previous request ' + fmt(q.reusedTokens) + ' tokens' + (q.cacheBreak !== undefined ? ', cache breaks at seq ' + q.cacheBreak : '') + (q.stale ? '; stale seqs ' + q.stale : ''),
    'composition: ' + D.composition.map(k => k + ' ' + fmt(q.composition[k])).join(', ')]
  $('detail').textContent = lines.join('\\n')
}

function table(first, rows) {
  const body = $('rows'); body.textContent = ''
  rows.forEach((q, i) => {
    const tr = h('tr', undefined, body); tr.id = 'req-' + (first + i)
    if (first + i === pinned) tr.className = 'sel'
    const cells = [first + i + 1, q.turn, q.step, q.seq, q.includedNodes + '/' + q.surfaceNodes, fmt(q.tokens), fmt(q.surfaceTokens), fmt(q.reported), fmt(q.reusedTokens),
      q.cacheBreak === undefined ? '-' : q.cacheBreak, q.stale || '-', q.compacted ? 'yes' : '-']
    for (const v of cells) h('td', String(v), tr)
    const comp = h('td', undefined, tr, 'l'), bar = el('svg', { width: 120, height: 9 }, comp)
    let x = 0
    for (const k of D.composition) { const w = q.composition[k] / Math.max(1, q.tokens) * 120; if (w > 0) el('rect', { x, y: 0, width: w, height: 9, fill: CAT[k] }, bar); x += w }
    h('td', q.revision === undefined ? '-' : q.revision, tr, 'l')
    tr.addEventListener('click', () => { select(first + i); detail(first + i, q.cells.length === 0 ? 0 : q.cells[q.cells.length - 1][1]) })
  })
}

function select(r) {
  pinned = r
  const p = Math.floor(r / D.pageRows)
  if (p !== page) { page = p; map() }
  document.querySelectorAll('tr.sel').forEach(t => { t.className = '' })
  const row = $('req-' + r); if (row) { row.className = 'sel'; row.scrollIntoView({ block: 'nearest' }) }
}

D.colOf = new Map(D.nodes.map((n, c) => [n[0], c]))
summary(); chart(); map()
$('prev').addEventListener('click', () => { if (page > 0) { page--; map() } })
$('next').addEventListener('click', () => { if (page < pages - 1) { page++; map() } })
$('zoom').addEventListener('change', e => { zoom = e.target.value; map() })
`

/**
 * @param model - the report model.
 * @returns the page: facts, the token chart, the map (paginated, zoomable), the request table and a detail pane.
 */
export function reportHtml(model: ReportModel): string {
  const legend = [['#3b7dd8', 'sent'], ['#0b3a82', 'sent, required by the host'], ['#e8e8e8', 'left out'], ['#d9822b', 'replaced by compaction'], ['#d62728', 'cache break'], ['#9467bd', 'tool unit'], ['#e377c2', 'runtime-context snapshot']]
  const categories = [['#999', 'system prompt and tools'], ['#2ca02c', 'user'], ['#1f77b4', 'assistant'], ['#9467bd', 'tool results'], ['#e377c2', 'snapshots'], ['#8c564b', 'other plugin messages'], ['#bbb', 'whole surface'], ['#d62728', 'provider-reported']]
  const swatches = (items: string[][]): string => items.map(([color, name]) => `<span><i style="background:${color}"></i>${name}</span>`).join('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>dsh-seam report: ${escapeHtml(model.session)}</title><style>${STYLE}</style></head>
<body>
<h1>dsh-seam report</h1>
<div class="facts" id="facts"></div>
<h2>Tokens per request (DSH token meter, by category)</h2>
<div class="legend">${swatches(categories)}</div>
<svg id="chart" width="100%" preserveAspectRatio="none" style="height:170px"></svg>
<h2>Map: requests (rows) × surface nodes (columns, by seq, grouped by turn)</h2>
<div class="legend">${swatches(legend)}</div>
<div class="controls"><button id="prev">◀ previous</button><button id="next">next ▶</button><span id="page"></span>
<label>node width <select id="zoom"><option value="fit">fit</option><option value="2">2 px</option><option value="4">4 px</option><option value="8">8 px</option><option value="16">16 px</option></select></label></div>
<div id="mapbox"><div id="map"></div></div>
<h2>Selected</h2><div id="detail">Hover a cell for its node; click to keep it here.</div>
<h2>Requests of this page</h2>
<table><thead><tr><th>#</th><th>turn</th><th>step</th><th>seq</th><th>sent/surface</th><th>tokens</th><th>surface tokens</th><th>reported</th><th>shared prefix</th><th>cache break</th><th>stale</th><th>compacted</th><th class="l">composition</th><th class="l">revision</th></tr></thead><tbody id="rows"></tbody></table>
<div id="tip"></div>
<script type="application/json" id="report-data">${embedded(model)}</script>
<script>${SCRIPT}</script>
</body></html>
`
}
