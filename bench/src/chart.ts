/**
 * A dependency-free SVG of log-log growth panels, for `BENCHMARKS.svg`.
 * @module bench/chart
 */

/** One line of a panel. */
interface Series {
  readonly name: string
  readonly color: string
  readonly points: readonly (readonly [x: number, y: number])[]
  /** Draw dashed: a reference line, or estimated points. */
  readonly dashed?: boolean
}

/** One log-log plot. */
export interface Panel {
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  readonly series: readonly Series[]
}

const WIDTH = 460
const HEIGHT = 340
const MARGIN = { left: 70, right: 20, top: 40, bottom: 90 }

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function decades(values: readonly number[]): [number, number] {
  const logs = values.filter(v => v > 0).map(Math.log10)
  return [Math.floor(Math.min(...logs)), Math.ceil(Math.max(...logs))]
}

function label(power: number): string {
  if (power >= 6) return `${10 ** (power - 6)}M`
  if (power >= 3) return `${10 ** (power - 3)}k`
  return power < 0 ? (10 ** power).toFixed(-power) : `${10 ** power}`
}

function panel(p: Panel, offsetX: number): string {
  const all = p.series.flatMap(s => s.points)
  const [x0, x1] = decades(all.map(([x]) => x))
  const [y0, y1] = decades(all.map(([, y]) => y))
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom
  const round = (v: number): number => Math.round(v * 10) / 10
  const sx = (x: number): number => round(offsetX + MARGIN.left + (Math.log10(x) - x0) / Math.max(1, x1 - x0) * plotW)
  const sy = (y: number): number => round(MARGIN.top + plotH - (Math.log10(y) - y0) / Math.max(1, y1 - y0) * plotH)
  const parts: string[] = [
    `<text x="${offsetX + WIDTH / 2}" y="22" text-anchor="middle" font-weight="bold">${escape(p.title)}</text>`,
    `<rect x="${offsetX + MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`,
  ]
  for (let e = x0; e <= x1; e++) {
    const x = sx(10 ** e)
    parts.push(`<line x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${MARGIN.top + plotH}" stroke="#ddd"/>`,
      `<text x="${x}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${label(e)}</text>`)
  }
  for (let e = y0; e <= y1; e++) {
    const y = sy(10 ** e)
    parts.push(`<line x1="${offsetX + MARGIN.left}" y1="${y}" x2="${offsetX + MARGIN.left + plotW}" y2="${y}" stroke="#ddd"/>`,
      `<text x="${offsetX + MARGIN.left - 6}" y="${y + 4}" text-anchor="end">${label(e)}</text>`)
  }
  parts.push(`<text x="${offsetX + MARGIN.left + plotW / 2}" y="${MARGIN.top + plotH + 34}" text-anchor="middle">${escape(p.xLabel)}</text>`,
    `<text transform="translate(${offsetX + 16} ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(p.yLabel)}</text>`)
  p.series.forEach((s, i) => {
    const path = s.points.map(([x, y]) => `${sx(x)},${sy(y)}`).join(' ')
    parts.push(`<polyline points="${path}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`)
    if (s.dashed !== true) for (const [x, y] of s.points) parts.push(`<circle cx="${sx(x)}" cy="${sy(y)}" r="3.5" fill="${s.color}"/>`)
    const ly = MARGIN.top + plotH + 52 + i * 16
    parts.push(`<line x1="${offsetX + MARGIN.left}" y1="${ly - 4}" x2="${offsetX + MARGIN.left + 24}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${offsetX + MARGIN.left + 30}" y="${ly}">${escape(s.name)}</text>`)
  })
  return parts.join('\n')
}

/**
 * @param panels - plots laid out left to right.
 * @returns a standalone SVG document.
 */
export function growthChart(panels: readonly Panel[]): string {
  const width = WIDTH * panels.length
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT}" viewBox="0 0 ${width} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${HEIGHT}" fill="white"/>`,
    ...panels.map((p, i) => panel(p, i * WIDTH)),
    '</svg>',
    '',
  ].join('\n')
}

/**
 * A line through the first point with slope 1 on log-log axes: what linear growth would look like.
 * @param points - measured points, ascending in x.
 * @returns the reference points at the same x values.
 */
export function linearReference(points: readonly (readonly [number, number])[]): [number, number][] {
  const [x0, y0] = points[0] as readonly [number, number]
  return points.map(([x]) => [x, y0 * x / x0])
}
