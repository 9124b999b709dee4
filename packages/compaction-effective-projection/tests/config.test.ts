import { describe, expect, it } from 'vitest'
import { ProjectionCompactionConfig, resolveProjectionConfig } from '../src/config.ts'

describe('resolveProjectionConfig', () => {
  it('defaults to measuring the projection with automatic pressure, and passes the basic keys through', () => {
    expect(resolveProjectionConfig({ thresholdRatio: 0.5, retainTokens: 100 })).toEqual({
      policy: { measure: 'projection', pressure: 'auto' },
      basic: { thresholdRatio: 0.5, retainTokens: 100 },
    })
    expect(resolveProjectionConfig({ measure: 'surface', pressure: 'overflow-only' }).policy).toEqual({ measure: 'surface', pressure: 'overflow-only' })
  })
})

describe('ProjectionCompactionConfig schema', () => {
  it('accepts the basic engine keys with measure and pressure, and rejects bad values of either', () => {
    expect(ProjectionCompactionConfig({ thresholdRatio: 0.5, measure: 'surface', pressure: 'auto' })).toMatchObject({ thresholdRatio: 0.5, measure: 'surface', pressure: 'auto' })
    expect(() => ProjectionCompactionConfig({ measure: 'tokens' } as never)).toThrow(/measure/)
    expect(() => ProjectionCompactionConfig({ measure: 'auto' } as never)).toThrow(/measure/)
    expect(() => ProjectionCompactionConfig({ pressure: true } as never)).toThrow(/pressure/)
    expect(() => ProjectionCompactionConfig({ thresholdRatio: 'high' } as never)).toThrow(/thresholdRatio/)
  })
})
