import { describe, expect, it } from 'vitest'
import { ProjectionCompactionConfig, ProjectionCompactionConfigError, resolveProjectionConfig } from '../src/config.ts'

describe('resolveProjectionConfig', () => {
  it('defaults to measuring the projection with automatic pressure, and passes the basic keys through', () => {
    expect(resolveProjectionConfig({ thresholdRatio: 0.5, retainTokens: 100 })).toEqual({
      policy: { measure: 'projection', pressure: 'auto' },
      basic: { thresholdRatio: 0.5, retainTokens: 100 },
    })
    expect(resolveProjectionConfig({ measure: 'surface', pressure: 'overflow-only' }).policy).toEqual({ measure: 'surface', pressure: 'overflow-only' })
  })

  it('rejects a measure or pressure it does not know, naming the key and the value', () => {
    expect(() => resolveProjectionConfig({ measure: 'request' as never })).toThrow(ProjectionCompactionConfigError)
    expect(() => resolveProjectionConfig({ measure: 'request' as never })).toThrow('ProjectionCompactionConfig: measure ("request") must be one of "projection", "surface"')
    expect(() => resolveProjectionConfig({ pressure: 'never' as never })).toThrow('ProjectionCompactionConfig: pressure ("never") must be one of "auto", "overflow-only"')
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
