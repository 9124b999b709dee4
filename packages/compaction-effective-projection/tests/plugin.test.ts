import { describe, expect, it } from 'vitest'
import { ProjectionCompactionConfigError } from '../src/plugin.ts'
import { ProjectionCompactionSettings, resolveSettings } from '../src/plugin.ts'
import { referenceText } from '../src/reference.ts'

const MODEL = { summary: 'model', referenceHint: '' }

describe('resolveSettings', () => {
  it('resolves measure: auto by the seam: projection on a loop with it, surface on a loop without it', () => {
    expect(resolveSettings({ measure: 'auto', thresholdRatio: 0.5 }, true)).toEqual({ engine: { measure: 'projection', thresholdRatio: 0.5 }, reference: MODEL })
    expect(resolveSettings({ measure: 'auto', pressure: 'overflow-only' }, false)).toEqual({ engine: { measure: 'surface', pressure: 'overflow-only' }, reference: MODEL })
    expect(resolveSettings({ measure: 'surface' }, false).engine).toEqual({ measure: 'surface' })
  })

  it('refuses measure: projection, the default, on a loop without the seam, naming the key and the value', () => {
    expect(() => resolveSettings({}, false)).toThrow(ProjectionCompactionConfigError)
    expect(() => resolveSettings({ measure: 'projection' }, false)).toThrow('ProjectionCompactionConfig: measure ("projection") needs the agent/context seam')
    expect(resolveSettings({}, true).engine).toEqual({ measure: 'projection' })
  })

  it('splits summary and referenceHint off the engine config, and rejects bad values of either', () => {
    expect(resolveSettings({ summary: 'reference', referenceHint: 'x', retainTokens: 10 }, true)).toEqual({ engine: { measure: 'projection', retainTokens: 10 }, reference: { summary: 'reference', referenceHint: 'x' } })
    expect(() => resolveSettings({ summary: 'llm' as never }, true)).toThrow('ProjectionCompactionConfig: summary ("llm") must be one of "model", "reference"')
    expect(() => resolveSettings({ summary: 'reference', referenceHint: 42 as never }, true)).toThrow('ProjectionCompactionConfig: referenceHint (42) must be a string')
  })
})

describe('ProjectionCompactionSettings schema', () => {
  it('is the engine schema with measure widened by auto, plus summary and referenceHint', () => {
    expect(ProjectionCompactionSettings({ measure: 'auto', pressure: 'overflow-only', thresholdRatio: 0.5, summary: 'reference', referenceHint: 'x' }))
      .toMatchObject({ measure: 'auto', pressure: 'overflow-only', thresholdRatio: 0.5, summary: 'reference', referenceHint: 'x' })
    expect(() => ProjectionCompactionSettings({ measure: 'tokens' } as never)).toThrow(/measure/)
    expect(() => ProjectionCompactionSettings({ summary: 'llm' } as never)).toThrow(/summary/)
    expect(() => ProjectionCompactionSettings({ thresholdRatio: 'high' } as never)).toThrow(/thresholdRatio/)
  })
})

describe('referenceText', () => {
  it('names the span, says the log keeps it, and fills the hint\'s seqs', () => {
    expect(referenceText({ start: 12, end: 40, messages: 9 }, 'Read {start} to {end}.')).toBe('Earlier conversation (session seqs 12-40, 9 messages) is not shown here; the session log keeps it word for word. Read 12 to 40.')
    expect(referenceText({ start: 1, end: 2, messages: 2 }, '')).toBe('Earlier conversation (session seqs 1-2, 2 messages) is not shown here; the session log keeps it word for word.')
  })
})
