import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { relevance, snippet, terms } from '../src/lexical.ts'
import type { TranscriptEntry } from '../src/log.ts'
import { readHistory, searchHistory, transcript } from '../src/log.ts'
import { log } from './support.ts'

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

describe('multilingual terms', () => {
  it('matches Chinese by segmenter words and character bigrams, across different cuts of the same words', () => {
    const query = terms('黄铜钥匙在哪里')
    expect(query).toEqual(expect.arrayContaining(['黄铜', '钥匙']))
    expect(query).not.toContain('哪里')
    expect(relevance(query, new Set(terms('她把黄铜钥匙藏在了灯塔下面')))).toBe(1)
    expect(relevance(query, new Set(terms('渡船滑进灰蒙蒙的水面')))).toBe(0)
    expect(relevance(terms('铜钥'), new Set(terms('一把黄铜钥匙')))).toBe(1)
  })

  it('drops particles and pronouns from Chinese bigrams', () => {
    expect(terms('你还记得我的妹妹吗')).toEqual(['妹妹'])
  })

  it('matches Japanese: kanji words, a lone kanji between kana, katakana words; not particles', () => {
    const text = new Set(terms('真鍮の鍵は灯台の下に隠した'))
    expect(relevance(terms('鍵はどこ？'), text)).toBe(1)
    expect(relevance(terms('灯台'), text)).toBe(1)
    expect(terms('鍵はどこ？')).toEqual(['鍵'])
    expect(relevance(terms('ランタン'), new Set(terms('古いランタンを持って')))).toBe(1)
  })

  it('matches mixed text in either script', () => {
    const text = new Set(terms('I pay my fare with a green glass coin minted in 科林, 在灯塔下面.'))
    expect(relevance(terms('green coin'), text)).toBe(1)
    expect(relevance(terms('科林的灯塔'), text)).toBe(1)
    expect(relevance(terms('科林 coin lighthouse'), text)).toBeCloseTo(2 / 3)
  })

  it('normalizes full-width and case', () => {
    expect(terms('ＫＥＹ４１７ Brass')).toEqual(['key417', 'brass'])
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
    const found = searchHistory(entries, 'brass key', { limit: 5, snippetChars: 200, beforeTurn: 3 })
    expect(found.hits.map(hit => [hit.turn, hit.role, hit.score])).toEqual([[1, 'user', 1], [1, 'assistant', 0.5]])
    expect(found.hits[0]!.snippet).toContain('417')
    expect(found).toMatchObject({ truncated: false, sourceCount: 4 })
    expect(searchHistory(entries, 'brass key', { limit: 1, snippetChars: 200, beforeTurn: 9 })).toMatchObject({ hits: [{ turn: 1 }], truncated: true, sourceCount: 6 })
    expect(searchHistory(entries, 'lighthouse', { limit: 5, snippetChars: 200, beforeTurn: 9 })).toEqual({ hits: [], truncated: false, sourceCount: 6 })
  })

  it('reads exact text by seq or turn range, cut at the character limit', () => {
    const [first] = entries as [TranscriptEntry]
    expect(readHistory(entries, { by: 'seq', from: first.seq, to: first.seq }, 1000)).toEqual({ entries: [first], truncated: false })
    expect(readHistory(entries, { by: 'turn', from: 2, to: 3 }, 1000).entries.map(entry => entry.turn)).toEqual([2, 2, 3, 3])
    const cut = readHistory(entries, { by: 'turn', from: 1, to: 3 }, 60)
    expect(cut.truncated).toBe(true)
    expect(cut.entries.map(entry => entry.text).join('').length).toBeLessThanOrEqual(61)
  })
})
