/**
 * The projection encoding round trip: the host's encoder (`encodeInclude`) against the one reader (`decodeProjection`).
 * Workspace-only: in DSH the two live in different packages, and the loop's specs round-trip them through a real session.
 */

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeProjection } from '../src/check.ts'
import { NodeIndex } from '../src/rules.ts'
import { encodeInclude } from '../src/host.ts'
import { assistantMessage, twoTurns } from './support.ts'

describe('encodeInclude / decodeProjection', () => {
  const caseArb = fc.uniqueArray(fc.nat({ max: 10_000 }), { minLength: 1, maxLength: 40 }).chain(surface => fc.record({
    surface: fc.constant(surface),
    keep: fc.array(fc.boolean(), { minLength: surface.length, maxLength: surface.length }),
  }))

  it('round-trips any subsequence that keeps the tail, in any seq order, one run per stretch', () => {
    fc.assert(fc.property(caseArb, ({ surface, keep }) => {
      keep[surface.length - 1] = true
      const include = surface.filter((_, i) => keep[i])
      const index = NodeIndex.of(surface.map(seq => ({ seq, message: assistantMessage(`reply ${seq}`) })))
      const ranges = encodeInclude(surface, surface.flatMap((_, i) => keep[i] ? [i] : []))
      const checked = decodeProjection(index, ranges)
      expect('included' in checked && checked.included.map(at => surface[at])).toEqual(include)
      const runs = keep.filter((kept, i) => kept && (i === 0 || !keep[i - 1])).length
      expect(ranges).toHaveLength(runs)
    }), { numRuns: 500 })
  })

  it('reads a run in surface order, not as a seq interval', () => {
    // After replacing [4..31] with summary 45, the surface is [45, 37, 48]; the run [37, 48] must not pick up 45.
    const index = NodeIndex.of([45, 37, 48].map(seq => ({ seq, message: assistantMessage(`n${seq}`) })))
    expect(decodeProjection(index, [[37, 48]])).toEqual({ included: [1, 2] })
  })

  it('decodes the structure only: a projection that leaves out required nodes still decodes', () => {
    const index = twoTurns()
    const code = (include: [number, number][]): string => {
      const checked = decodeProjection(index, include)
      return 'violation' in checked ? checked.violation.code : 'ok'
    }
    expect(code([[4, 6]])).toBe('ok')
    expect(code([[1, 1], [4, 6]])).toBe('ok')
    expect(code([[4, 9]])).toBe('foreign-seq')
    expect(code([[5, 6], [4, 4]])).toBe('unordered-ranges')
    expect(code([[6, 4]])).toBe('unordered-ranges')
    expect(code([[5, 6]])).toBe('ok')
    expect(code([[2, 2], [4, 5]])).toBe('ok')
    expect(code([[2, 2], [4, 6]])).toBe('ok')
  })
})
