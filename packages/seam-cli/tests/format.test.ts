/**
 * `dsh-seam` output escapes every string a log supplies: no control character, ANSI sequence, separator or
 * bidirectional override reaches a terminal, a table row cannot be forged, and JSON stays the same value.
 */

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LogAnalysis, RequestSummary } from '../src/analyze.ts'
import type { ReadLog } from '../src/format.ts'
import { inspectTable, printable, safeJson, verifyJson, violationLine } from '../src/format.ts'

// oxlint-disable-next-line no-control-regex -- the test looks for the control characters a terminal acts on
const TERMINAL_ACTS_ON = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/

/** Undo {@link printable}: its escapes are JSON string escapes. */
function unescape(text: string): string {
  return JSON.parse(`"${text.replace(/"/g, '\\"')}"`) as string
}

const log: ReadLog = { header: { id: 'se\u001b[31mssion', version: 0, createdAt: 0 } as unknown as ReadLog['header'], events: 12, lineOf: seq => seq + 2 }

function request(revision: string | undefined, seq = 7): RequestSummary {
  return {
    turn: 1, step: 1, seq, surfaceNodes: 4, includedNodes: 2, excluded: [[1, 2]], tokens: 30, surfaceTokens: 50,
    ...revision === undefined ? {} : { projectionSeq: seq - 1, revision },
  }
}

describe('printable', () => {
  it('leaves one line with nothing a terminal acts on, and loses nothing', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), text => {
      const shown = printable(text)
      expect(shown).not.toMatch(TERMINAL_ACTS_ON)
      expect(shown).not.toMatch(/\p{Surrogate}/u)
      expect(unescape(shown)).toBe(text)
    }))
  })

  it('writes newlines, ANSI escapes and overrides as escapes', () => {
    expect(printable('a\nb\r\t\\ \u001b[2J \u009b31m \u202e \u2028')).toBe('a\\nb\\r\\t\\\\ \\u001B[2J \\u009B31m \\u202E \\u2028')
  })
})

describe('safeJson', () => {
  it('is the same JSON value with no raw character a terminal acts on', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
      const document = { value, text }
      const json = safeJson(document)
      // oxlint-disable-next-line no-control-regex -- the test looks for the control characters a terminal acts on
      expect(json).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/)
      expect(json).toBe(`${JSON.stringify(JSON.parse(json), null, 2).replace(/[\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/g, c => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`)}\n`)
      expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(document)))
    }))
  })
})

describe('inspectTable', () => {
  it('keeps one row per request whatever the revisions hold', () => {
    fc.assert(fc.property(fc.array(fc.option(fc.string({ unit: 'binary' }), { nil: undefined }), { maxLength: 6 }), revisions => {
      const analysis: LogAnalysis = { requests: revisions.map((revision, i) => request(revision, 10 + i)) }
      const lines = inspectTable(log, analysis).split('\n')
      expect(lines).toHaveLength(revisions.length + 3)
      // oxlint-disable-next-line no-control-regex -- the test looks for the control characters a terminal acts on
      expect(lines.join('\n')).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/)
      lines.slice(2, -1).forEach((line, i) => expect(line).toMatch(new RegExp(`^ *1 +1 +${10 + i} `)))
    }))
  })

  it('escapes the session id in its head line', () => {
    expect(inspectTable(log, { requests: [] }).split('\n')[0]).toBe('session se\\u001B[31mssion (format v0): 12 events, 0 requests, 0 projected')
  })
})

describe('violations', () => {
  const analysis: LogAnalysis = {
    requests: [request('ok')],
    violation: { code: 'unordered-ranges', seq: 9, turn: 2, step: 1, revision: 'r\n1  1  forged', message: 'includes seq 5 but not seq 6\u001b[0m' },
  }

  it('are one escaped line naming file, line, seq, turn, step, revision and code', () => {
    expect(violationLine('verify', '/logs/a\nb.jsonl', log, analysis.violation!)).toBe(
      'dsh-seam verify: /logs/a\\nb.jsonl line 11 (seq 9, turn 2 step 1, revision "r\\n1  1  forged"): [unordered-ranges] includes seq 5 but not seq 6\\u001B[0m\n',
    )
  })

  it('are reported by verify --json with their line', () => {
    expect(JSON.parse(verifyJson('a.jsonl', log, analysis))).toEqual({
      file: 'a.jsonl', session: log.header.id, events: 12, requests: 1, projected: 1, ok: false,
      violation: { ...analysis.violation, line: 11 }, warnings: [],
    })
  })
})
