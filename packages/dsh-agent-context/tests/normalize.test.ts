import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AgentContextErrorCode } from '../src/index.ts'
import { AgentContextError, normalizeSelection, toolUnits } from '../src/index.ts'
import { assistantMessage, seqsFrom, surfaceArb, toolResultMessage, userMessage } from './support.ts'

describe('normalizeSelection over random surfaces with tool units', () => {
  it('returns exactly the unit closure of include ∪ requiredSeqs, in surface order, without duplicates', () => {
    const caseArb = surfaceArb().chain(surface => fc.record({
      surface: fc.constant(surface),
      include: seqsFrom(surface.nodes, 30),
      required: seqsFrom(surface.nodes, 4),
      revision: fc.option(fc.string(), { nil: undefined }),
    }))
    fc.assert(fc.property(caseArb, ({ surface, include, required, revision }) => {
      const order = surface.nodes.map(node => node.seq)
      const result = normalizeSelection(
        { agent: 'a1', nodes: surface.nodes, requiredSeqs: required },
        revision === undefined ? { include } : { include, revision },
      )

      const positions = result.include.map(seq => order.indexOf(seq))
      expect(positions.every((position, i) => position >= 0 && (i === 0 || position > (positions[i - 1] as number)))).toBe(true)

      const expected = new Set([...include, ...required])
      for (const unit of surface.units) {
        if (unit.some(seq => expected.has(seq))) for (const seq of unit) expected.add(seq)
      }
      expect(new Set(result.include)).toEqual(expected)
      expect(result.include).toHaveLength(expected.size)

      const chosen = new Set(result.include)
      for (const unit of surface.units) {
        expect(unit.every(seq => chosen.has(seq)) || unit.every(seq => !chosen.has(seq))).toBe(true)
      }
      expect(result.isDefault).toBe(result.include.length === order.length)
      expect(result.revision).toBe(revision)
    }), { numRuns: 300 })
  })

  it('groups tool units exactly as the generator built them', () => {
    fc.assert(fc.property(surfaceArb(), surface => {
      const expected = new Map<number, readonly number[]>()
      for (const unit of surface.units) if (unit.length > 1) for (const seq of unit) expected.set(seq, unit)
      expect(toolUnits(surface.nodes)).toEqual(expected)
    }), { numRuns: 200 })
  })

  it('finds the call of a result that arrives after a later call message', () => {
    const nodes = [
      { seq: 10, message: assistantMessage('first', ['a']) },
      { seq: 11, message: assistantMessage('second', ['b']) },
      { seq: 12, message: toolResultMessage('b') },
      { seq: 13, message: toolResultMessage('a') },
    ]
    expect(toolUnits(nodes)).toEqual(new Map([[10, [10, 13]], [13, [10, 13]], [11, [11, 12]], [12, [11, 12]]]))
    expect(normalizeSelection({ agent: 'a1', nodes, requiredSeqs: [] }, { include: [13] }).include).toEqual([10, 13])
  })
})

describe('normalizeSelection errors', () => {
  const nodes = [
    { seq: 3, message: userMessage('hi') },
    { seq: 5, message: assistantMessage('calling', ['c1']) },
    { seq: 7, message: toolResultMessage('c1') },
  ]
  const input = { agent: 'agent-7', nodes, requiredSeqs: [7] }

  function refusal(selection: unknown): AgentContextError {
    try {
      normalizeSelection(input, selection)
    } catch (error: unknown) {
      if (error instanceof AgentContextError) return error
      throw error
    }
    throw new Error(`normalizeSelection accepted ${JSON.stringify(selection)}`)
  }

  const cases: [name: string, selection: unknown, code: AgentContextErrorCode, revision: string | undefined, shown: string[]][] = [
    ['a non-object result', 42, 'invalid-selection', undefined, ['42']],
    ['a null result', null, 'invalid-selection', undefined, ['null']],
    ['a non-array include', { include: '3,5', revision: 'keep-2' }, 'invalid-selection', 'keep-2', ['"3,5"']],
    ['a fractional seq', { include: [3, 1.5], revision: 'r1' }, 'invalid-seq', 'r1', ['1.5']],
    ['a negative seq', { include: [-1], revision: 'r1' }, 'invalid-seq', 'r1', ['-1']],
    ['a NaN seq', { include: [Number.NaN], revision: 'r1' }, 'invalid-seq', 'r1', ['NaN']],
    ['a string seq', { include: ['5'], revision: 'r1' }, 'invalid-seq', 'r1', ['"5"']],
    ['an unknown seq', { include: [3, 4, 999, 999], revision: 'r2' }, 'unknown-seq', 'r2', ['4', '999']],
    ['a non-string revision', { include: [3], revision: 7 }, 'invalid-revision', undefined, ['7']],
  ]

  it.each(cases)('refuses %s with a typed error naming the agent, revision and values', (_name, selection, code, revision, shown) => {
    const error = refusal(selection)
    expect(error.code).toBe(code)
    expect(error.agent).toBe('agent-7')
    expect(error.revision).toBe(revision)
    expect(error.message).toContain('"agent-7"')
    if (revision !== undefined) expect(error.message).toContain(`revision "${revision}"`)
    for (const value of shown) expect(error.message).toContain(value)
  })

  it('lists each unknown seq once', () => {
    expect(refusal({ include: [3, 4, 999, 999] }).values).toEqual([4, 999])
  })
})
