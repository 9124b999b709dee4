import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { calibrationFactor, promptTokens, requestEnvelope } from '../src/calibration.ts'

const usageArb = fc.record({
  inputTokens: fc.nat(100_000),
  outputTokens: fc.nat(10_000),
  cacheReadTokens: fc.nat(100_000),
  cacheWriteTokens: fc.nat(100_000),
}, { requiredKeys: ['inputTokens', 'outputTokens'] })

describe('promptTokens', () => {
  it('sums the prompt buckets and leaves output out', () => {
    fc.assert(fc.property(usageArb, (usage) => {
      expect(promptTokens(usage)).toBe(usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0))
    }))
  })
})

describe('calibrationFactor', () => {
  it('is the provider/heuristic ratio of the sampled request, never below 1', () => {
    fc.assert(fc.property(fc.nat(1_000_000), fc.integer({ min: 1, max: 1_000_000 }), (prompt, estimate) => {
      const factor = calibrationFactor({ seq: 1, promptTokens: prompt, estimatedTokens: estimate })
      expect(factor).toBeGreaterThanOrEqual(1)
      expect(factor).toBe(prompt >= estimate ? prompt / estimate : 1)
    }))
  })

  it('is 1 without a sample or with a non-positive estimate', () => {
    expect(calibrationFactor(undefined)).toBe(1)
    expect(calibrationFactor({ seq: 1, promptTokens: 500, estimatedTokens: 0 })).toBe(1)
  })
})

describe('requestEnvelope', () => {
  it('leaves empty system and tools out, as the canonical request header does', () => {
    expect(requestEnvelope('', [])).toEqual({})
    expect(requestEnvelope(undefined, undefined)).toEqual({})
    const tool = { name: 'echo', description: 'Echo.', parameters: {} }
    expect(requestEnvelope('be brief', [tool])).toEqual({ system: 'be brief', tools: [tool] })
  })
})
