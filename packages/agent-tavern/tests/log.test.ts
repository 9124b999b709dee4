import type { SessionEvent } from '@deepseek-ai/dsh-session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { TranscriptEntry } from '../src/index.ts'
import { memoryNotes, readHistory, relevance, searchHistory, searchMemory, snippet, terms, transcript } from '../src/index.ts'

/** A log in DSH's event form, built the way the loop appends a turn: user message, tool call and result, reply. */
function log(turns: readonly { user: string; reply: string; write?: { args: string; error?: boolean } }[]): SessionEvent[] {
  const events: Record<string, unknown>[] = []
  const push = (type: string, data: unknown): void => { events.push({ type, seq: events.length, time: 0, data }) }
  turns.forEach(({ user, reply, write }, i) => {
    const turn = i + 1
    push('turn/start', { turn })
    push('user/message', { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: user }], source: { kind: 'user' } })
    push('user/message', { id: `c${turn}`, role: 'user', content: [{ type: 'text', text: 'Current scene: a context snapshot' }], source: { kind: 'plugin', plugin: 'x' } })
    if (write !== undefined) {
      const callId = `call-${turn}`
      push('assistant/message', { turn, step: 1, message: { id: `a${turn}w`, role: 'assistant', content: [{ type: 'tool-call', id: callId, name: 'memory_write', arguments: write.args }], source: { kind: 'model', provider: 'p', model: 'm' } } })
      push('tool/call', { turn, step: 1, callId, name: 'memory_write', arguments: write.args })
      push('tool/result', { turn, step: 1, message: { id: `r${turn}`, role: 'user', content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: '{}' }], isError: write.error === true }], source: { kind: 'tool', callId } } })
    }
    push('assistant/message', { turn, step: write === undefined ? 1 : 2, message: { id: `a${turn}`, role: 'assistant', content: [{ type: 'text', text: reply }], source: { kind: 'model', provider: 'p', model: 'm' } } })
    push('turn/end', { turn, reason: { kind: 'completed' } })
  })
  return events as unknown as SessionEvent[]
}

describe('lexical matching', () => {
  it('finds content terms: lower case, no stopwords or short words, plural s removed', () => {
    expect(terms('Do you remember the Brass keys I gave you at the harbor?')).toEqual(['brass', 'key', 'harbor'])
  })

  it('scores the share of query terms a text holds, within [0, 1]', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (query, text) => {
      const score = relevance(terms(query), new Set(terms(text)))
      expect(score).toBeGreaterThanOrEqual(0)
      expect(score).toBeLessThanOrEqual(1)
      if (terms(query).length > 0) expect(relevance(terms(query), new Set(terms(`${text} ${query}`)))).toBe(1)
    }))
  })

  it('cuts a snippet around the first match, never longer than asked plus the cut marks', () => {
    fc.assert(fc.property(fc.string({ minLength: 200, maxLength: 600 }), fc.integer({ min: 16, max: 120 }), (filler, chars) => {
      const text = `${filler} lighthouse ${filler}`
      const cut = snippet(text, ['lighthouse'], chars)
      expect(cut.replace(/^…|…$/g, '').length).toBeLessThanOrEqual(chars)
      if (chars >= 40) expect(cut).toContain('lighthouse')
    }))
    expect(snippet('short text', ['text'], 100)).toBe('short text')
  })
})

describe('the transcript', () => {
  const events = log([
    { user: 'I press a brass key stamped 417 into your palm.', reply: 'Mira pockets the key.' },
    { user: 'We row past the heron pool.', reply: 'The herons watch.', write: { args: '{"text":"the key opens the cellar","tags":["fact"],"importance":0.9}' } },
    { user: 'Do you remember the brass key?', reply: 'Let me think.', write: { args: '{"text":"never written","importance":2}', error: true } },
  ])
  const entries = transcript(events)

  it('holds user-sourced messages and reply text with their turns, not contexts or tool traffic', () => {
    expect(entries.map(entry => [entry.turn, entry.role, entry.text])).toEqual([
      [1, 'user', 'I press a brass key stamped 417 into your palm.'],
      [1, 'assistant', 'Mira pockets the key.'],
      [2, 'user', 'We row past the heron pool.'],
      [2, 'assistant', 'The herons watch.'],
      [3, 'user', 'Do you remember the brass key?'],
      [3, 'assistant', 'Let me think.'],
    ])
  })

  it('searches turns before the current one, best score first, then oldest first', () => {
    const hits = searchHistory(entries, 'brass key', { limit: 5, snippetChars: 200, beforeTurn: 3 })
    expect(hits.map(hit => [hit.turn, hit.role, hit.score])).toEqual([[1, 'user', 1], [1, 'assistant', 0.5]])
    expect(hits[0]!.snippet).toContain('417')
    expect(searchHistory(entries, 'brass key', { limit: 1, snippetChars: 200, beforeTurn: 9 })).toHaveLength(1)
    expect(searchHistory(entries, 'lighthouse', { limit: 5, snippetChars: 200, beforeTurn: 9 })).toEqual([])
  })

  it('reads exact text by seq or turn range, cut at the character limit', () => {
    const [first] = entries as [TranscriptEntry]
    expect(readHistory(entries, { by: 'seq', from: first.seq, to: first.seq }, 1000)).toEqual({ entries: [first], truncated: false })
    expect(readHistory(entries, { by: 'turn', from: 2, to: 3 }, 1000).entries.map(entry => entry.turn)).toEqual([2, 2, 3, 3])
    const cut = readHistory(entries, { by: 'turn', from: 1, to: 3 }, 60)
    expect(cut.truncated).toBe(true)
    expect(cut.entries.map(entry => entry.text).join('').length).toBeLessThanOrEqual(61)
  })

  it('keeps a memory note per successful memory_write call, rebuilt from the logged call and result', () => {
    expect(memoryNotes(events)).toEqual([{ id: 'call-2', text: 'the key opens the cellar', tags: ['fact'], importance: 0.9, seq: 9, turn: 2 }])
    const hits = searchMemory(memoryNotes(events), 'cellar key', 5)
    expect(hits.map(hit => [hit.id, hit.score])).toEqual([['call-2', 109]])
  })
})
