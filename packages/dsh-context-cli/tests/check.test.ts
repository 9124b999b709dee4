/**
 * `checkProjection` accepts exactly what the host's normalizer produces and names each broken host invariant.
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import { encodeInclude, normalizeSelection } from '@dsh-context/agent-context'
import { checkProjection } from '@dsh-context/cli'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GeneratedSurface } from '../../dsh-agent-context/tests/support.ts'
import { seqsFrom, surfaceArb } from '../../dsh-agent-context/tests/support.ts'

/** A surface, a listener's raw selection and the host's required seqs. */
const offerArb = surfaceArb().chain(surface => fc.record({
  surface: fc.constant(surface),
  selection: seqsFrom(surface.nodes, 30),
  required: fc.subarray(surface.nodes.map(node => node.seq)),
}))

function normalized(surface: GeneratedSurface, selection: readonly number[], required: readonly number[]): number[] {
  return [...normalizeSelection({ agent: 'property', nodes: surface.nodes, requiredSeqs: required }, { include: selection }).include]
}

function seqsOf(nodes: readonly ContextNode[]): number[] {
  return nodes.map(node => node.seq)
}

describe('checkProjection', () => {
  it('accepts every projection the host normalizer produces, selecting the same nodes', () => {
    fc.assert(fc.property(offerArb, ({ surface, selection, required }) => {
      const include = normalized(surface, selection, required)
      const checked = checkProjection({ nodes: surface.nodes, requiredSeqs: required }, encodeInclude(seqsOf(surface.nodes), include))
      expect('included' in checked && seqsOf(surface.nodes).filter((_, i) => checked.included[i] === 1)).toEqual(include)
    }))
  })

  it('names a tool-call unit that is included in part', () => {
    const arb = offerArb.filter(({ surface }) => surface.units.length > 0).chain(offer => fc.record({
      offer: fc.constant(offer),
      unit: fc.constantFrom(...offer.surface.units),
    }).chain(({ offer, unit }) => fc.record({ offer: fc.constant(offer), unit: fc.constant(unit), dropped: fc.constantFrom(...unit) })))
    fc.assert(fc.property(arb, ({ offer: { surface, selection }, unit, dropped }) => {
      const include = normalized(surface, [...selection, ...unit], []).filter(seq => seq !== dropped)
      const checked = checkProjection({ nodes: surface.nodes, requiredSeqs: [] }, encodeInclude(seqsOf(surface.nodes), include))
      expect('violation' in checked && checked.violation.code).toBe('open-unit')
    }))
  })

  it('names a required seq that is left out, before any open unit', () => {
    const arb = offerArb.filter(({ required }) => required.length > 0)
      .chain(offer => fc.record({ offer: fc.constant(offer), dropped: fc.constantFrom(...offer.required) }))
    fc.assert(fc.property(arb, ({ offer: { surface, selection, required }, dropped }) => {
      const include = normalized(surface, selection, required).filter(seq => seq !== dropped)
      const checked = checkProjection({ nodes: surface.nodes, requiredSeqs: required }, encodeInclude(seqsOf(surface.nodes), include))
      expect('violation' in checked && checked.violation).toEqual({ code: 'required-missing', detail: expect.stringMatching(new RegExp(`\\b${dropped}\\b`)) as unknown })
    }))
  })

  it('names ranges that reach outside the surface or run backwards', () => {
    fc.assert(fc.property(offerArb, fc.nat(), ({ surface }, foreign) => {
      const seqs = seqsOf(surface.nodes)
      fc.pre(!seqs.includes(foreign))
      const outside = checkProjection({ nodes: surface.nodes, requiredSeqs: [] }, [[foreign, seqs.at(-1) as number]])
      expect('violation' in outside && outside.violation.code).toBe('foreign-seq')
      fc.pre(seqs.length > 1)
      const backwards = checkProjection({ nodes: surface.nodes, requiredSeqs: [] }, [[seqs.at(-1) as number, seqs[0] as number]])
      expect('violation' in backwards && backwards.violation.code).toBe('unordered-ranges')
    }))
  })
})
