import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PricedNode, ProjectedRegionInput } from '../src/region.ts'
import { selectProjectedRange, sentAfterPrune, sentAfterReplacement } from '../src/region.ts'

/** A surface of plain nodes and tool units (an assistant call node followed by its result nodes). */
interface Surface {
  readonly nodes: PricedNode[]
  /** Cut `i` (before node `i`) lies between two units. */
  readonly cuts: boolean[]
  /** Node index to the index of its unit's first node. */
  readonly unitOf: number[]
}

const surfaceArb = fc.array(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 14 })
  .chain(units => fc.shuffledSubarray([...Array(units.flat().length).keys()].map(i => 3 * i + 7), { minLength: units.flat().length })
    .map((seqs) => {
      const nodes: PricedNode[] = []
      const cuts: boolean[] = []
      const unitOf: number[] = []
      for (const unit of units) {
        const first = nodes.length
        unit.forEach((tokens, k) => {
          cuts.push(k === 0)
          unitOf.push(first)
          nodes.push({ seq: seqs[nodes.length] as number, tokens })
        })
      }
      cuts.push(true)
      return { nodes, cuts, unitOf } satisfies Surface
    }))

/**
 * A surface, a sent set (unit-closed as the host's normalizer makes it, or arbitrary), required seqs among the sent,
 * and a retention budget.
 */
const inputArb = surfaceArb.chain(surface => fc.record({
  unitClosed: fc.boolean(),
  sentPicks: fc.array(fc.boolean(), { minLength: surface.nodes.length, maxLength: surface.nodes.length }),
  requiredPicks: fc.array(fc.boolean(), { minLength: surface.nodes.length, maxLength: surface.nodes.length }),
  retainTokens: fc.integer({ min: 0, max: 2000 }),
}).map(({ unitClosed, sentPicks, requiredPicks, retainTokens }) => {
  const isSent = (i: number): boolean => sentPicks[unitClosed ? surface.unitOf[i] as number : i] as boolean
  const sent = new Set(surface.nodes.filter((_, i) => isSent(i)).map(node => node.seq))
  const required = new Set(surface.nodes.filter((node, i) => sent.has(node.seq) && requiredPicks[i]).map(node => node.seq))
  const input: ProjectedRegionInput = { nodes: surface.nodes, sent, required, retainTokens, balanced: cut => surface.cuts[cut] as boolean }
  return { surface, input }
}))

/** The basic engine's `selectCompactableRange` rule (compaction-basic region.ts): head-anchored, priced tail, balanced cut. */
function headAnchoredRange(
  nodes: readonly PricedNode[],
  cuts: readonly boolean[],
  retainTokens: number,
): { start: number; end: number } | null {
  let accumulated = 0
  let keep = nodes.length
  for (let i = nodes.length - 1; i >= 0; i--) {
    accumulated += (nodes[i] as PricedNode).tokens
    keep = i
    if (accumulated >= retainTokens) break
  }
  while (keep > 0 && !cuts[keep]) keep--
  if (keep === 0) return null
  return { start: (nodes[0] as PricedNode).seq, end: (nodes[keep - 1] as PricedNode).seq }
}

describe('selectProjectedRange', () => {
  it('compacts only sent, non-required nodes between balanced cuts, and keeps at least retainTokens of sent tail', () => {
    fc.assert(fc.property(inputArb, ({ surface, input }) => {
      const range = selectProjectedRange(input)
      if (range === null) return
      const first = surface.nodes.findIndex(node => node.seq === range.start)
      const last = surface.nodes.findIndex(node => node.seq === range.end)
      expect(first).toBeGreaterThanOrEqual(0)
      expect(last).toBeGreaterThanOrEqual(first)
      const span = surface.nodes.slice(first, last + 1)
      expect(span.every(node => input.sent.has(node.seq) && !input.required.has(node.seq))).toBe(true)
      expect(surface.cuts[first] && surface.cuts[last + 1]).toBe(true)
      expect(range.tokens).toBe(span.reduce((sum, node) => sum + node.tokens, 0))
      const keptTail = surface.nodes.slice(last + 1).filter(node => input.sent.has(node.seq)).reduce((sum, node) => sum + node.tokens, 0)
      expect(keptTail).toBeGreaterThanOrEqual(input.retainTokens)
    }))
  })

  it('equals DSH’s head-anchored rule when the request sends every node and requires none', () => {
    fc.assert(fc.property(surfaceArb, fc.integer({ min: 0, max: 2000 }), (surface, retainTokens) => {
      const range = selectProjectedRange({
        nodes: surface.nodes,
        sent: new Set(surface.nodes.map(node => node.seq)),
        required: new Set(),
        retainTokens,
        balanced: cut => surface.cuts[cut] as boolean,
      })
      const basic = headAnchoredRange(surface.nodes, surface.cuts, retainTokens)
      expect(range === null ? null : { start: range.start, end: range.end }).toEqual(basic)
    }))
  })

  it('finds nothing when the kept tail reaches the first sent node, or every sent node is required', () => {
    fc.assert(fc.property(inputArb, ({ surface, input }) => {
      const sentTokens = surface.nodes.filter(node => input.sent.has(node.seq)).reduce((sum, node) => sum + node.tokens, 0)
      const compactable = surface.nodes.filter(node => input.sent.has(node.seq) && !input.required.has(node.seq))
      if (sentTokens <= input.retainTokens || compactable.length === 0) expect(selectProjectedRange(input)).toBeNull()
    }))
  })

  const plain = (seqs: number[], tokens: number[]): PricedNode[] => seqs.map((seq, i) => ({ seq, tokens: tokens[i] as number }))

  it('compacts the history between required nodes: the open turn\'s input and an unchanged snapshot stay', () => {
    // 1 the turn's input | 2 runtime-context snapshot | 3 call, 4 result | 5 call, 6 result | 7 call, 8 result (open)
    const nodes = plain([1, 2, 3, 4, 5, 6, 7, 8], [50, 50, 300, 300, 300, 300, 100, 100])
    const balanced = (cut: number): boolean => [0, 1, 2, 4, 6, 8].includes(cut)
    const sent = new Set([1, 2, 3, 4, 5, 6, 7, 8])
    const range = selectProjectedRange({ nodes, sent, required: new Set([1, 2, 7, 8]), retainTokens: 150, balanced })
    expect(range).toEqual({ start: 3, end: 6, tokens: 1200 })
  })

  it('picks the sent run with the most tokens, not a small pinned head', () => {
    const nodes = plain([1, 2, 3, 4, 5, 6, 7], [10, 300, 300, 200, 200, 200, 50])
    const sent = new Set([1, 4, 5, 6, 7])
    const range = selectProjectedRange({ nodes, sent, required: new Set([7]), retainTokens: 100, balanced: () => true })
    expect(range).toEqual({ start: 4, end: 5, tokens: 400 })
  })

  it('prefers the oldest run on a tie, and never reaches into unsent nodes', () => {
    const nodes = plain([1, 2, 3, 4, 5, 6], [100, 100, 999, 100, 100, 100])
    const sent = new Set([1, 2, 4, 5, 6])
    const range = selectProjectedRange({ nodes, sent, required: new Set([6]), retainTokens: 0, balanced: () => true })
    expect(range).toEqual({ start: 1, end: 2, tokens: 200 })
  })

  it('trims a run of sent nodes to balanced edges when the sent set splits a tool unit', () => {
    // 1 plain | 2 plain | 3 call, 4 result | 5 plain; the request sends 1-3 and 5
    const nodes = plain([1, 2, 3, 4, 5], [100, 100, 100, 100, 100])
    const balanced = (cut: number): boolean => cut !== 3
    const range = selectProjectedRange({ nodes, sent: new Set([1, 2, 3, 5]), required: new Set([5]), retainTokens: 0, balanced })
    expect(range).toEqual({ start: 1, end: 2, tokens: 200 })
  })

  it('does not split a tool unit at either edge', () => {
    // 1 plain | 2 call, 3 result | 4 plain | 5 call, 6 result (open unit kept)
    const nodes = plain([1, 2, 3, 4, 5, 6], [100, 100, 100, 100, 100, 100])
    const balanced = (cut: number): boolean => [0, 1, 3, 4, 6].includes(cut)
    const range = selectProjectedRange({ nodes, sent: new Set([2, 3, 4, 5, 6]), required: new Set([6]), retainTokens: 0, balanced })
    expect(range).toEqual({ start: 2, end: 4, tokens: 300 })
  })
})

describe('sentAfterReplacement', () => {
  it('drops the shadowed seqs and adds the replacement', () => {
    expect([...sentAfterReplacement(new Set([3, 4, 5, 9]), [4, 5], 12)]).toEqual([3, 9, 12])
  })
})

describe('sentAfterPrune', () => {
  it('replaces each sent pruned result by its replacement and leaves unsent ones unsent', () => {
    const pruned = [{ originalSeq: 4, replacementSeq: 20 }, { originalSeq: 7, replacementSeq: 21 }]
    expect([...sentAfterPrune(new Set([3, 4, 9]), pruned)]).toEqual([3, 9, 20])
    expect([...sentAfterPrune(new Set([3, 9]), [])]).toEqual([3, 9])
  })
})
