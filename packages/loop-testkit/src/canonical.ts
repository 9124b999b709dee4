/**
 * Canonical JSON for comparing two runs of the same script: wall-clock times and abort signals dropped, generated
 * UUIDs replaced by their order of first appearance.
 * @module @dsh-seam/loop-testkit/canonical
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * @param value - events, requests or anything JSON-serializable.
 * @returns its canonical JSON text.
 */
export function canonicalJson(value: unknown): string {
  const ids = new Map<string, string>()
  return JSON.stringify(value, (key, v: unknown) => {
    if (key === 'time' && typeof v === 'number') return undefined
    if (key === 'signal') return undefined
    if (typeof v === 'string' && UUID.test(v)) {
      if (!ids.has(v)) ids.set(v, `uuid-${ids.size}`)
      return ids.get(v)
    }
    return v
  })
}
