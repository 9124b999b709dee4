import { describe, expect, it } from 'vitest'
import { ProjectionCompactionConfigError } from '../src/config.ts'
import { ProjectionCompactionSettings, resolveMeasure } from '../src/plugin.ts'

describe('resolveMeasure', () => {
  it('resolves measure: auto by the seam: projection on a loop with it, surface on a loop without it', () => {
    expect(resolveMeasure({ measure: 'auto', thresholdRatio: 0.5 }, true)).toEqual({ measure: 'projection', thresholdRatio: 0.5 })
    expect(resolveMeasure({ measure: 'auto', summary: 'reference' }, false)).toEqual({ measure: 'surface', summary: 'reference' })
    expect(resolveMeasure({ measure: 'surface' }, false)).toEqual({ measure: 'surface' })
  })

  it('refuses measure: projection, the default, on a loop without the seam, naming the key and the value', () => {
    expect(() => resolveMeasure({}, false)).toThrow(ProjectionCompactionConfigError)
    expect(() => resolveMeasure({ measure: 'projection' }, false)).toThrow('ProjectionCompactionConfig: measure ("projection") needs the agent/context seam')
    expect(resolveMeasure({}, true)).toEqual({ measure: 'projection' })
  })
})

describe('ProjectionCompactionSettings schema', () => {
  it('is the engine schema with measure widened by auto', () => {
    expect(ProjectionCompactionSettings({ measure: 'auto', pressure: 'overflow-only', thresholdRatio: 0.5 })).toMatchObject({ measure: 'auto', pressure: 'overflow-only', thresholdRatio: 0.5 })
    expect(() => ProjectionCompactionSettings({ measure: 'tokens' } as never)).toThrow(/measure/)
    expect(() => ProjectionCompactionSettings({ summary: 'llm' } as never)).toThrow(/summary/)
    expect(() => ProjectionCompactionSettings({ thresholdRatio: 'high' } as never)).toThrow(/thresholdRatio/)
  })
})
