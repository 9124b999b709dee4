import type { ContextNode } from '@deepseek-ai/dsh-agent'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AgentContextErrorCode } from '../src/errors.ts'
import { AgentContextError, MAX_REVISION_LENGTH } from '../src/errors.ts'
import { isUserInput, NodeIndex, toolUnits } from '../src/nodes.ts'
import { normalizeSelection } from '../src/normalize.ts'
import { assistantMessage, seqsFrom, surfaceArb, toolResultMessage, userMessage } from './support.ts'

/** The host's rules written out plainly, as the oracle for the normalizer. */
function expectedInclude(nodes: readonly ContextNode[], units: readonly (readonly number[])[], seqs: readonly number[]): number[] {
  const chosen = new Set(seqs)
  for (const unit of units) if (unit.some(seq => chosen.has(seq))) for (const seq of unit) chosen.add(seq)
  const ordered = nodes.filter(node => chosen.has(node.seq))
  const first = ordered[0]
  if (first !== undefined && !isUserInput(first.message)) {
    const before = nodes.slice(0, nodes.indexOf(first)).findLast(node => isUserInput(node.message))
    if (before !== undefined) chosen.add(before.seq)
  }
  return nodes.filter(node => chosen.has(node.seq)).map(node => node.seq)
}

describe('normalizeSelection over random surfaces with tool units', () => {
  it('returns the closure of include ∪ requiredSeqs under the host rules, in surface order, without duplicates', () => {
    const caseArb = surfaceArb().chain(surface => fc.record({
      surface: fc.constant(surface),
      include: seqsFrom(surface.nodes, 30),
      required: seqsFrom(surface.nodes, 4),
      revision: fc.option(fc.string({ unit: 'grapheme-ascii', maxLength: 30 }), { nil: undefined }),
    }))
    fc.assert(fc.property(caseArb, ({ surface, include, required, revision }) => {
      const result = normalizeSelection(
        { agent: 'a1', index: NodeIndex.of(surface.nodes), requiredSeqs: required },
        revision === undefined ? { include } : { include, revision },
      )
      expect(result.include).toEqual(expectedInclude(surface.nodes, surface.units, [...include, ...required]))
      const chosen = new Set(result.include)
      for (const unit of surface.units) {
        expect(unit.every(seq => chosen.has(seq)) || unit.every(seq => !chosen.has(seq))).toBe(true)
      }
      const first = surface.nodes.find(node => chosen.has(node.seq))
      if (first !== undefined && !isUserInput(first.message)) {
        expect(surface.nodes.slice(0, surface.nodes.indexOf(first)).some(node => isUserInput(node.message))).toBe(false)
      }
      expect(result.isDefault).toBe(result.include.length === surface.nodes.length)
      expect(result.revision).toBe(revision)
      expect(result.stale).toBe(0)
    }), { numRuns: 300 })
  })

  it('groups tool units exactly as the generator built them', () => {
    fc.assert(fc.property(surfaceArb(), (surface) => {
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
    expect(normalizeSelection({ agent: 'a1', index: NodeIndex.of(nodes), requiredSeqs: [] }, { include: [13] }).include).toEqual([10, 13])
  })

  it('opens with the nearest user input before a selection that starts with a tool unit', () => {
    const nodes = [
      { seq: 1, message: userMessage('first question') },
      { seq: 2, message: assistantMessage('answer') },
      { seq: 3, message: userMessage('second question') },
      { seq: 4, message: assistantMessage('calling', ['c']) },
      { seq: 5, message: toolResultMessage('c') },
    ]
    const index = NodeIndex.of(nodes)
    expect(normalizeSelection({ agent: 'a1', index, requiredSeqs: [5] }, { include: [] }).include).toEqual([3, 4, 5])
    expect(normalizeSelection({ agent: 'a1', index, requiredSeqs: [] }, { include: [2] }).include).toEqual([1, 2])
  })
})

describe('stale seqs', () => {
  const nodes = [
    { seq: 40, message: userMessage('summary of 1-30') },
    { seq: 31, message: userMessage('question') },
    { seq: 32, message: assistantMessage('answer') },
  ]
  const resolve = (seq: number): number | null | undefined => seq === 1 ? 40 : seq === 2 ? null : undefined

  it('resolves a replaced seq to its replacement and drops one whose replacement is gone, counting both', () => {
    const result = normalizeSelection({ agent: 'a1', index: NodeIndex.of(nodes), requiredSeqs: [32], resolve }, { include: [1, 2, 32] })
    expect(result.include).toEqual([40, 32])
    expect(result.stale).toBe(2)
  })

  it('still refuses a seq that never was a node', () => {
    expect(() => normalizeSelection({ agent: 'a1', index: NodeIndex.of(nodes), requiredSeqs: [], resolve }, { include: [1, 77] }))
      .toThrow(expect.objectContaining({ code: 'unknown-seq', values: [77] }))
  })
})

describe('normalizeSelection errors', () => {
  const nodes = [
    { seq: 3, message: userMessage('hi') },
    { seq: 5, message: assistantMessage('calling', ['c1']) },
    { seq: 7, message: toolResultMessage('c1') },
  ]
  const input = { agent: 'agent-7', index: NodeIndex.of(nodes), requiredSeqs: [7] }

  function refusal(selection: unknown): AgentContextError {
    try {
      normalizeSelection(input, selection)
    } catch (error: unknown) {
      if (error instanceof AgentContextError) return error
      throw error
    }
    throw new Error('normalizeSelection accepted the selection')
  }

  const revoked = Proxy.revocable({}, {})
  revoked.revoke()
  const throwingGetter = { get include(): never { throw new Error('include getter exploded') } }
  const nullProtoThrower = { get include(): never { throw Object.create(null) as object } }
  const trappedArray = new Proxy([3], { get(target, key) { if (key === 'length') throw new TypeError('length trap'); return Reflect.get(target, key) as unknown } })

  const cases: [name: string, selection: unknown, code: AgentContextErrorCode, revision: string | undefined, shown: string[]][] = [
    ['a non-object result', 42, 'invalid-selection', undefined, ['42']],
    ['a null result', null, 'invalid-selection', undefined, ['null']],
    ['a non-array include', { include: '3,5', revision: 'keep-2' }, 'invalid-selection', 'keep-2', ['"3,5"']],
    ['a throwing include getter', throwingGetter, 'invalid-selection', undefined, ['include getter exploded']],
    ['a getter throwing a null-prototype object', nullProtoThrower, 'invalid-selection', undefined, ['cannot be read ({})']],
    ['a revoked proxy', revoked.proxy, 'invalid-selection', undefined, ['cannot be read']],
    ['an include proxy whose length traps', { include: trappedArray }, 'invalid-selection', undefined, ['length trap']],
    ['a fractional seq', { include: [3, 1.5], revision: 'r1' }, 'invalid-seq', 'r1', ['1.5']],
    ['a negative seq', { include: [-1], revision: 'r1' }, 'invalid-seq', 'r1', ['-1']],
    ['a NaN seq', { include: [Number.NaN], revision: 'r1' }, 'invalid-seq', 'r1', ['NaN']],
    ['a string seq', { include: ['5'], revision: 'r1' }, 'invalid-seq', 'r1', ['"5"']],
    ['an unknown seq', { include: [3, 4, 999, 999], revision: 'r2' }, 'unknown-seq', 'r2', ['4', '999']],
    ['a non-string revision', { include: [3], revision: 7 }, 'invalid-revision', undefined, ['7']],
    ['a revision over the cap', { include: [3], revision: 'x'.repeat(MAX_REVISION_LENGTH + 1) }, 'invalid-revision', undefined, [`(${MAX_REVISION_LENGTH + 1} characters)`]],
    ['a revision with a newline', { include: [3], revision: 'a\nforged row' }, 'invalid-revision', undefined, ['"a\\nforged row'] ],
    ['a revision with an ANSI escape', { include: [3], revision: '\u001b[31mred' }, 'invalid-revision', undefined, ['\\u001b[31mred']],
  ]

  it.each(cases)('refuses %s with a typed error naming the agent, revision and values', (_name, selection, code, revision, shown) => {
    const error = refusal(selection)
    expect(error.code).toBe(code)
    expect(error.agent).toBe('agent-7')
    expect(error.revision).toBe(revision)
    expect(error.message.startsWith(`agent/context [${code}] for agent "agent-7"`)).toBe(true)
    if (revision !== undefined) expect(error.message).toContain(`revision "${revision}"`)
    for (const value of shown) expect(error.message).toContain(value)
  })

  it('accepts a printable revision of exactly the cap, Chinese included', () => {
    const revision = `记忆-${'r'.repeat(MAX_REVISION_LENGTH - 3)}`
    expect(normalizeSelection(input, { include: [3], revision }).revision).toBe(revision)
  })

  it('lists each unknown seq once', () => {
    expect(refusal({ include: [3, 4, 999, 999] }).values).toEqual([4, 999])
  })
})

describe('NodeIndex.required', () => {
  const snapshot = (plugin: string, text: string) => ({
    ...userMessage(text),
    source: { kind: 'plugin', plugin, form: 'snapshot', sections: [{ name: plugin, text }] },
  }) as unknown as ReturnType<typeof userMessage>
  const runtime = (text: string) => ({ ...userMessage(text), source: { kind: 'plugin', plugin: '@deepseek-ai/dsh-system-prompt' } }) as unknown as ReturnType<typeof userMessage>

  it('is the open turn\'s user input, the newest snapshot per context source, the continuing unit and the tail', () => {
    const index = NodeIndex.of([
      { seq: 1, message: runtime('cwd=/a') },
      { seq: 2, message: snapshot('time-context', '09:00') },
      { seq: 3, message: userMessage('old question') },
      { seq: 4, message: assistantMessage('old answer') },
      { seq: 5, message: snapshot('time-context', '10:00') },
      { seq: 7, message: userMessage('new question') },
      { seq: 8, message: userMessage('an attachment') },
      { seq: 9, message: assistantMessage('calling', ['c']) },
      { seq: 10, message: toolResultMessage('c') },
    ], 6)
    expect(index.required().map(at => index.seqs[at])).toEqual([1, 5, 7, 8, 9, 10])
  })

  it('forgets the continuing unit once a plain reply follows it', () => {
    const index = NodeIndex.of([
      { seq: 1, message: userMessage('q') },
      { seq: 2, message: assistantMessage('calling', ['c']) },
      { seq: 3, message: toolResultMessage('c') },
      { seq: 4, message: assistantMessage('done') },
    ], 0)
    expect(index.required().map(at => index.seqs[at])).toEqual([1, 4])
  })
})
