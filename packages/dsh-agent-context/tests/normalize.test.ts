import type { ContextSelection } from '@deepseek-ai/dsh-agent'
import type { UserMessage } from '@deepseek-ai/dsh-llm'
import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { NodeIndex } from '../src/rules.ts'
import type { AgentContextErrorCode } from '../src/host.ts'
import { AgentContextError, describeFailure, encodeInclude, isValidRevision, MAX_REVISION_LENGTH, normalizeSelection } from '../src/host.ts'

const AGENT = SessionId('a1')

const userMessage = (text: string): UserMessage => createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } })
const assistantMessage = (text: string, calls: readonly string[] = []) => createAssistantMessage({
  content: [{ type: 'text', text }, ...calls.map(id => ({ type: 'tool-call' as const, id: CallId(id), name: 'echo', arguments: '{}' }))],
  source: { provider: 'fake', model: 'fake-model' },
})
const toolResultMessage = (id: string) => createToolResultMessage({ callId: CallId(id), content: [{ type: 'text', text: `result of ${id}` }], isError: false })

describe('normalizeSelection', () => {
  // Two turns, a two-call unit and a one-call unit, in a seq order a replace leaves behind.
  const nodes = [
    { seq: 40, message: userMessage('summary of 1-30') },
    { seq: 31, message: userMessage('question') },
    { seq: 32, message: assistantMessage('calling', ['a', 'b']) },
    { seq: 33, message: toolResultMessage('a') },
    { seq: 34, message: toolResultMessage('b') },
    { seq: 35, message: assistantMessage('answer') },
    { seq: 36, message: userMessage('next question') },
    { seq: 37, message: assistantMessage('calling', ['c']) },
    { seq: 38, message: toolResultMessage('c') },
  ]
  const index = NodeIndex.of(nodes)
  const seqs = nodes.map(node => node.seq)
  const seqArb = fc.array(fc.constantFrom(...seqs), { maxLength: 20 })

  it('returns NodeIndex.close of include ∪ requiredSeqs, with the revision (required unless every node), counting nothing stale', () => {
    const caseArb = fc.record({
      include: seqArb,
      required: fc.array(fc.constantFrom(...seqs), { maxLength: 3 }),
      revision: fc.option(fc.string({ unit: 'grapheme-ascii', maxLength: 30 }), { nil: undefined }),
    })
    fc.assert(fc.property(caseArb, ({ include, required, revision }) => {
      const input = { agent: AGENT, index, requiredSeqs: required }
      const selection = revision === undefined ? { include } : { include, revision }
      const select = (): ReturnType<typeof normalizeSelection> => normalizeSelection(input, selection)
      const positions = index.close([...include, ...required].map(seq => index.position.get(seq) as number))
      if (revision === undefined && positions.length < nodes.length) {
        expect(select).toThrow(expect.objectContaining({ code: 'missing-revision' }))
        return
      }
      const result = select()
      expect(result.positions).toEqual(positions)
      expect(result.include).toEqual(positions.map(at => seqs[at]))
      expect(result.isDefault).toBe(positions.length === nodes.length)
      expect(result.revision).toBe(revision)
      expect(result.stale).toBe(0)
    }), { numRuns: 300 })
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
    const result = normalizeSelection({ agent: AGENT, index: NodeIndex.of(nodes), requiredSeqs: [32], resolve }, { include: [1, 2, 32], revision: 'r' })
    expect(result.include).toEqual([40, 32])
    expect(result.stale).toBe(2)
  })

  it('refuses a selection of fewer than every node without a revision, and takes every node without one', () => {
    const input = { agent: AGENT, index: NodeIndex.of(nodes), requiredSeqs: [32] }
    expect(() => normalizeSelection(input, { include: [32] })).toThrow(expect.objectContaining({ code: 'missing-revision', revision: undefined }))
    expect(normalizeSelection(input, { include: [40, 31] }).isDefault).toBe(true)
  })

  it('still refuses a seq that never was a node', () => {
    expect(() => normalizeSelection({ agent: AGENT, index: NodeIndex.of(nodes), requiredSeqs: [], resolve }, { include: [1, 77] }))
      .toThrow(expect.objectContaining({ code: 'unknown-seq', values: [77] }))
  })
})

describe('normalizeSelection errors', () => {
  const nodes = [
    { seq: 3, message: userMessage('hi') },
    { seq: 5, message: assistantMessage('calling', ['c1']) },
    { seq: 7, message: toolResultMessage('c1') },
  ]
  const input = { agent: AGENT, index: NodeIndex.of(nodes), requiredSeqs: [7] }

  function refusal(selection: ContextSelection): AgentContextError {
    try {
      normalizeSelection(input, selection)
    } catch (error: unknown) {
      if (error instanceof AgentContextError) return error
      throw error
    }
    throw new Error('normalizeSelection accepted the selection')
  }

  const cases: [name: string, selection: ContextSelection, code: AgentContextErrorCode, revision: string | undefined, shown: string[]][] = [
    ['a seq that is no node', { include: [3, 4, 999, 999], revision: 'r2' }, 'unknown-seq', 'r2', ['4', '999']],
    ['a fractional or negative seq', { include: [3, 1.5, -1], revision: 'r1' }, 'unknown-seq', 'r1', ['1.5', '-1']],
    ['a revision over the cap', { include: [3], revision: 'x'.repeat(MAX_REVISION_LENGTH + 1) }, 'invalid-revision', undefined, [`(${MAX_REVISION_LENGTH + 1} code units)`]],
  ]

  it.each(cases)('refuses %s with a typed error naming the agent, revision and values', (_name, selection, code, revision, shown) => {
    const error = refusal(selection)
    expect(error.code).toBe(code)
    expect(error.agent).toBe(AGENT)
    expect(error.revision).toBe(revision)
    expect(error.message.startsWith(`agent/context [${code}] for agent "a1"`)).toBe(true)
    if (revision !== undefined) expect(error.message).toContain(`revision "${revision}"`)
    for (const value of shown) expect(error.message).toContain(value)
  })

  it('accepts a revision of exactly the cap, Chinese included', () => {
    const revision = `记忆-${'r'.repeat(MAX_REVISION_LENGTH - 3)}`
    expect(normalizeSelection(input, { include: [3], revision }).revision).toBe(revision)
  })

  it('takes a revision of at most MAX_REVISION_LENGTH code units, whatever its characters', () => {
    expect(isValidRevision('r'.repeat(MAX_REVISION_LENGTH))).toBe(true)
    expect(isValidRevision('a\nb')).toBe(true)
    expect(isValidRevision('🌊'.repeat(MAX_REVISION_LENGTH / 2 + 1))).toBe(false)
  })

  it('lists each unknown seq once', () => {
    expect(refusal({ include: [3, 4, 999, 999] }).values).toEqual([4, 999])
  })
})

describe('describeFailure', () => {
  it('names an error by its name and message and any other thrown value as inspected, in one bounded line', () => {
    expect(describeFailure(new TypeError('boom'))).toBe('TypeError: boom')
    expect(describeFailure(new Error('line one\n  line two\r\nline three'))).toBe('Error: line one line two line three')
    const astral = describeFailure(new Error(`${'x'.repeat(492)}🌊🌊🌊🌊🌊`))
    expect(astral).toMatch(/^Error: x{492}… \(509 characters\)$/)
    expect(describeFailure({ code: 7, nested: { deep: [1, 2] } })).toBe('{ code: 7, nested: { deep: [ 1, 2 ] } }')
    const long = describeFailure(new Error('x'.repeat(2000)))
    expect(long).toBe(`Error: ${'x'.repeat(493)}… (2007 characters)`)
  })

  it('names a value whose own code throws while it is described by its type', () => {
    const trap = (): never => { throw new Error('trap') }
    const trapped = new Proxy({}, { getPrototypeOf: trap, get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap })
    expect(describeFailure(trapped)).toBe('a thrown object that throws when it is described')
    const getter = Object.create(Error.prototype, { name: { get: trap } }) as Error
    expect(describeFailure(getter)).toBe('a thrown object that throws when it is described')
  })
})

describe('encodeInclude', () => {
  it('writes one [first, last] run per stretch of consecutive positions, naming seqs in surface order', () => {
    // After a replace the surface [45, 37, 48, 50] is not ordered by seq; runs name positions' seqs.
    expect(encodeInclude([45, 37, 48, 50], [1, 2])).toEqual([[37, 48]])
    expect(encodeInclude([45, 37, 48, 50], [0, 2, 3])).toEqual([[45, 45], [48, 50]])
    expect(encodeInclude([45, 37, 48, 50], [])).toEqual([])
  })
})
