import { describe, expect, it } from 'vitest'
import { decodeProjection } from '../src/check.ts'
import { NodeIndex } from '../src/rules.ts'
import { policyFinding } from '../src/policy.ts'
import { assistantMessage, toolResultMessage, twoTurns, userMessage } from './support.ts'

describe('policyFinding', () => {
  it('names what a decoded projection leaves out that the host would send', () => {
    const index = twoTurns()
    const code = (include: [number, number][]): string => {
      const decoded = decodeProjection(index, include)
      if ('violation' in decoded) throw new Error(decoded.violation.detail)
      return policyFinding(index, decoded.included)?.code ?? 'ok'
    }
    expect(code([[4, 6]])).toBe('ok')
    expect(code([[1, 1], [4, 6]])).toBe('ok')
    expect(code([[5, 6]])).toBe('required-missing')
    expect(code([[2, 2], [4, 5]])).toBe('required-missing')
    expect(code([[2, 2], [4, 6]])).toBe('opening')
    const earlierUnit = NodeIndex.of([
      { seq: 1, message: userMessage('q1') },
      { seq: 2, message: assistantMessage('calling', ['c']) },
      { seq: 3, message: toolResultMessage('c') },
      { seq: 5, message: userMessage('q2') },
      { seq: 6, message: assistantMessage('a2') },
    ], 4)
    expect(policyFinding(earlierUnit, [0, 1, 3, 4])?.code).toBe('open-unit')
    expect(policyFinding(earlierUnit, [0, 1, 2, 3, 4])).toBeUndefined()
  })
})

