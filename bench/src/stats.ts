/**
 * Timing and summary statistics for the benchmarks.
 * @module bench/stats
 */

/**
 * @param values - samples, at least one.
 * @returns their median.
 */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Run a full garbage collection when Node was started with `--expose-gc`, so one run's garbage is not billed to the next. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.()
}

/**
 * Milliseconds one synchronous call takes: batches of calls sized to last at least `batchMs`, median over `batches`.
 * @param call - the work.
 * @param options - batch duration and count.
 * @returns median milliseconds per call.
 */
export function timePerCall(call: () => unknown, { batchMs = 100, batches = 7 } = {}): number {
  let perBatch = 1
  for (;;) {
    const start = performance.now()
    for (let i = 0; i < perBatch; i++) call()
    const elapsed = performance.now() - start
    if (elapsed >= batchMs / 4) {
      perBatch = Math.max(1, Math.ceil(perBatch * batchMs / elapsed))
      break
    }
    perBatch *= 4
  }
  const samples: number[] = []
  for (let b = 0; b < batches; b++) {
    collectGarbage()
    const start = performance.now()
    for (let i = 0; i < perBatch; i++) call()
    samples.push((performance.now() - start) / perBatch)
  }
  return median(samples)
}

/**
 * Milliseconds one asynchronous run takes.
 * @param run - the work.
 * @returns elapsed milliseconds.
 */
export async function timeOnce(run: () => unknown): Promise<number> {
  collectGarbage()
  const start = performance.now()
  await run()
  return performance.now() - start
}

/**
 * @param value - a number.
 * @param digits - significant digits.
 * @returns the number with `digits` significant digits, without exponent notation.
 */
export function significant(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return String(value)
  if (value === 0) return '0'
  const magnitude = Math.floor(Math.log10(Math.abs(value)))
  const decimals = Math.max(0, digits - 1 - magnitude)
  return value.toFixed(decimals)
}

/** A growth factor per 10× input at or below this counts as linear: ×10 is exactly linear, the margin absorbs noise. */
const LINEAR_PER_10X = 15

/**
 * @param factors - growth factors per 10× input ({@link growthPer10x}).
 * @returns whether every one counts as linear.
 */
export function isLinear(factors: readonly number[]): boolean {
  return factors.every(factor => factor <= LINEAR_PER_10X)
}

/**
 * Growth between consecutive points, normalized to a 10× step in x: `(y₂/y₁)^(1/log₁₀(x₂/x₁))`.
 * @param points - `[x, y]` in ascending x.
 * @returns one factor per consecutive pair.
 */
export function growthPer10x(points: readonly (readonly [x: number, y: number])[]): number[] {
  return points.slice(1).map(([x, y], i) => {
    const [x0, y0] = points[i] as readonly [number, number]
    return (y / y0) ** (1 / Math.log10(x / x0))
  })
}

/**
 * @param factors - growth factors.
 * @returns them as `×10, ×17`.
 */
export function growthText(factors: readonly number[]): string {
  return factors.map(factor => `×${significant(factor, 2)}`).join(', ')
}
