import type { ContextNode } from '@deepseek-ai/dsh-agent'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { isUserInput, NodeIndex, openTurnStart, standingSource } from '../src/rules.ts'
import { assistantMessage, seqsFrom, surfaceArb, toolResultMessage, twoTurns, userMessage } from './support.ts'

/** The host's rules written out plainly, as the oracle for `NodeIndex.close`. */
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

/** `NodeIndex.units` by seq: each member of a multi-node unit mapped to the unit's seqs. */
function unitsBySeq(nodes: readonly ContextNode[]): Map<number, readonly number[]> {
  const index = NodeIndex.of(nodes)
  const byMember = new Map<number, readonly number[]>()
  for (const unit of index.units) {
    if (unit.length < 2) continue
    const seqs = unit.map(at => index.seqs[at] as number)
    for (const seq of seqs) byMember.set(seq, seqs)
  }
  return byMember
}

describe('NodeIndex.close over random surfaces with tool units', () => {
  it('closes a selection under the host rules, in surface order, without duplicates', () => {
    const caseArb = surfaceArb().chain(surface => fc.record({ surface: fc.constant(surface), chosen: seqsFrom(surface.nodes, 30) }))
    fc.assert(fc.property(caseArb, ({ surface, chosen }) => {
      const index = NodeIndex.of(surface.nodes)
      const closed = index.close(chosen.map(seq => index.position.get(seq) as number)).map(at => index.seqs[at])
      expect(closed).toEqual(expectedInclude(surface.nodes, surface.units, chosen))
      const kept = new Set(closed)
      for (const unit of surface.units) {
        expect(unit.every(seq => kept.has(seq)) || unit.every(seq => !kept.has(seq))).toBe(true)
      }
    }), { numRuns: 300 })
  })

  it('groups tool units exactly as the generator built them', () => {
    fc.assert(fc.property(surfaceArb(), (surface) => {
      const expected = new Map<number, readonly number[]>()
      for (const unit of surface.units) if (unit.length > 1) for (const seq of unit) expected.set(seq, unit)
      expect(unitsBySeq(surface.nodes)).toEqual(expected)
    }), { numRuns: 200 })
  })

  it('finds the call of a result that arrives after a later call message', () => {
    const nodes = [
      { seq: 10, message: assistantMessage('first', ['a']) },
      { seq: 11, message: assistantMessage('second', ['b']) },
      { seq: 12, message: toolResultMessage('b') },
      { seq: 13, message: toolResultMessage('a') },
    ]
    expect(unitsBySeq(nodes)).toEqual(new Map([[10, [10, 13]], [13, [10, 13]], [11, [11, 12]], [12, [11, 12]]]))
    const index = NodeIndex.of(nodes)
    expect(index.close([3]).map(at => index.seqs[at])).toEqual([10, 13])
  })

  it('opens with the nearest user input before a selection that starts with a tool unit', () => {
    const index = NodeIndex.of([
      { seq: 1, message: userMessage('first question') },
      { seq: 2, message: assistantMessage('answer') },
      { seq: 3, message: userMessage('second question') },
      { seq: 4, message: assistantMessage('calling', ['c']) },
      { seq: 5, message: toolResultMessage('c') },
    ])
    expect(index.close([4]).map(at => index.seqs[at])).toEqual([3, 4, 5])
    expect(index.close([1]).map(at => index.seqs[at])).toEqual([1, 2])
  })
})

describe('NodeIndex.required', () => {
  const snapshot = (plugin: string, text: string) => ({
    ...userMessage(text),
    source: { kind: 'plugin', plugin, form: 'snapshot', sections: [{ name: plugin, text }] },
  }) as unknown as ReturnType<typeof userMessage>
  /** A message of a producer of its own kind (as DSH's producers declare their sources), with a context form or none. */
  const produced = (kind: string, text: string, form?: string, fields: Record<string, unknown> = {}) => ({
    ...userMessage(text),
    source: { kind, ...form === undefined ? {} : { form }, ...fields },
  }) as unknown as ReturnType<typeof userMessage>
  const cleared = (plugin: string) => ({ ...userMessage('none'), source: { kind: 'plugin', plugin } }) as unknown as ReturnType<typeof userMessage>

  it('reads standing context off the declared form, keyed by producer: instructions, catalogs and snapshots stand', () => {
    expect(standingSource(produced('agent-instructions', 'AGENTS.md', 'instructions'))).toBe('agent-instructions')
    expect(standingSource(produced('skill-catalog', 'skills', 'catalog'))).toBe('skill-catalog')
    expect(standingSource(snapshot('time-context', '09:00'))).toBe('plugin:time-context')
    expect(standingSource(produced('plugin', 'a notice', 'notice', { plugin: 'jobs' }))).toBeUndefined()
    expect(standingSource(userMessage('q'))).toBeUndefined()
  })

  it('is the open turn\'s input, the continuing unit and the tail, the open turn read back from the newest turn/start', () => {
    expect(twoTurns().requiredSeqs()).toEqual([4, 5, 6])
    const events = ['turn/start', 'user/message', 'turn/start', 'user/message'].map((type, seq) => ({ type, seq })) as unknown as SessionEvent[]
    expect(openTurnStart(events.length, seq => events[seq])).toBe(2)
    expect(openTurnStart(0, () => undefined)).toBe(-1)
  })

  it('is the open turn\'s user input, standing context, the continuing unit and the tail', () => {
    const index = NodeIndex.of([
      { seq: 1, message: snapshot('@deepseek-ai/dsh-system-prompt', 'cwd=/a') },
      { seq: 2, message: snapshot('time-context', '09:00') },
      { seq: 3, message: userMessage('old question') },
      { seq: 4, message: assistantMessage('old answer') },
      { seq: 5, message: snapshot('time-context', '10:00') },
      { seq: 7, message: userMessage('new question') },
      { seq: 8, message: userMessage('an attachment') },
      { seq: 9, message: assistantMessage('calling', ['c']) },
      { seq: 10, message: toolResultMessage('c') },
    ], 6)
    expect(index.requiredSeqs()).toEqual([1, 5, 7, 8, 9, 10])
  })

  it('keeps each distinct instructions message, the newest catalog and snapshot of each producer, and a later formless message of a snapshot producer', () => {
    const index = NodeIndex.of([
      { seq: 1, message: produced('agent-instructions', 'AGENTS.md', 'instructions', { baseline: true, changes: [] }) },
      { seq: 2, message: produced('skill-catalog', 'skills v1', 'catalog', { entries: [] }) },
      { seq: 3, message: snapshot('@deepseek-ai/dsh-system-prompt', 'cwd=/a') },
      { seq: 4, message: userMessage('q1') },
      { seq: 5, message: produced('skill-invocation', 'poetry body', 'instructions', { name: 'poetry' }) },
      { seq: 6, message: assistantMessage('a1') },
      { seq: 7, message: produced('agent-instructions', 'nested AGENTS.md', 'instructions', { changes: [] }) },
      { seq: 8, message: produced('skill-catalog', 'skills v2', 'catalog', { entries: [], update: true }) },
      { seq: 9, message: cleared('@deepseek-ai/dsh-system-prompt') },
      { seq: 10, message: produced('plugin', 'a notice', 'notice', { plugin: 'jobs', summary: 'done' }) },
      { seq: 11, message: cleared('never-a-snapshot') },
      { seq: 12, message: assistantMessage('a2') },
      { seq: 14, message: userMessage('q3') },
      { seq: 15, message: produced('skill-invocation', 'poetry body', 'instructions', { name: 'poetry' }) },
    ], 13)
    // The same skill body published again (seq 15) supersedes the earlier one (seq 5); different instructions stand side by side.
    expect(index.requiredSeqs()).toEqual([1, 7, 8, 9, 14, 15])
    // A compaction may replace standing context outside the open turn, as the basic engine does, never the turn's input.
    expect(index.replaceableStandingSeqs().sort((a, b) => a - b)).toEqual([1, 7, 8, 9])
  })

  it('keeps a producer\'s newest catalog and its newest snapshot apart: neither supersedes the other', () => {
    const index = NodeIndex.of([
      { seq: 1, message: produced('plugin', 'catalog v1', 'catalog', { plugin: 'kit' }) },
      { seq: 2, message: produced('plugin', 'state v1', 'snapshot', { plugin: 'kit' }) },
      { seq: 3, message: userMessage('q1') },
      { seq: 4, message: assistantMessage('a1') },
      { seq: 5, message: produced('plugin', 'state v2', 'snapshot', { plugin: 'kit' }) },
      { seq: 7, message: userMessage('q2') },
    ], 6)
    expect(index.requiredSeqs()).toEqual([1, 5, 7])
  })

  it('forgets the continuing unit once a plain reply follows it', () => {
    const index = NodeIndex.of([
      { seq: 1, message: userMessage('q') },
      { seq: 2, message: assistantMessage('calling', ['c']) },
      { seq: 3, message: toolResultMessage('c') },
      { seq: 4, message: assistantMessage('done') },
    ], 0)
    expect(index.requiredSeqs()).toEqual([1, 4])
  })
})
