/**
 * A dependency-free SVG line chart of tokens per request, one line per series.
 * @module @dsh-seam/agent-tavern-demo/chart
 */

/** One line of the chart. */
export interface Series {
  readonly label: string
  readonly color: string
  /** Drawn dashed. */
  readonly dashed?: boolean
  readonly values: readonly number[]
}

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** A round axis maximum at or above `value`: 1, 2 or 5 times a power of ten. */
function niceCeiling(value: number): number {
  if (value <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(value))
  return ([1, 2, 5, 10].map(step => step * power).find(candidate => candidate >= value)) as number
}

/**
 * Render the chart.
 * @param title - the chart title.
 * @param series - the lines; each value is one request, in order.
 * @returns a standalone SVG document.
 */
export function tokensChart(title: string, series: readonly Series[]): string {
  const width = 960
  const height = 480
  const pad = { left: 80, right: 24, top: 48, bottom: 56 }
  const plotW = width - pad.left - pad.right
  const plotH = height - pad.top - pad.bottom
  const longest = Math.max(1, ...series.map(line => line.values.length))
  const top = niceCeiling(Math.max(0, ...series.flatMap(line => line.values)))
  const x = (i: number): number => pad.left + (longest === 1 ? 0 : (i / (longest - 1)) * plotW)
  const y = (v: number): number => pad.top + plotH - (v / top) * plotH
  const ticks = [0, 0.25, 0.5, 0.75, 1].map(share => share * top)
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="16">${escape(title)}</text>`,
    ...ticks.map(v => `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/><text x="${pad.left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${Math.round(v).toLocaleString('en-US')}</text>`),
    `<line x1="${pad.left}" x2="${pad.left}" y1="${pad.top}" y2="${pad.top + plotH}" stroke="#333"/>`,
    `<line x1="${pad.left}" x2="${width - pad.right}" y1="${pad.top + plotH}" y2="${pad.top + plotH}" stroke="#333"/>`,
    `<text x="${pad.left + plotW / 2}" y="${height - 16}" text-anchor="middle">request (in session order)</text>`,
    `<text x="18" y="${pad.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${pad.top + plotH / 2})">request tokens</text>`,
    ...series.map(line => `<polyline fill="none" stroke="${line.color}" stroke-width="1.5"${line.dashed === true ? ' stroke-dasharray="4 3"' : ''} points="${line.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`),
    ...series.map((line, i) => `<rect x="${pad.left + 16}" y="${pad.top + 8 + i * 20}" width="14" height="4" fill="${line.color}"/><text x="${pad.left + 36}" y="${pad.top + 14 + i * 20}">${escape(line.label)}</text>`),
    '</svg>',
  ]
  return `${parts.join('\n')}\n`
}
