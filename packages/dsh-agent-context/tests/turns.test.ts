import type { SessionEvent } from '@deepseek-ai/dsh-session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TurnIndex } from '../src/turns.ts'

/** A log of `turn/start` events (turns counting up) among other events; only `type` and `data.turn` are read. */
const logArb = fc.array(fc.boolean(), { maxLength: 200 }).map(starts => {
  let turn = 0
  return starts.map((start, seq) => (start ? { seq, type: 'turn/start', data: { turn: ++turn } } : { seq, type: 'message', data: {} }) as unknown as SessionEvent)
})

/** The oracle: read back from the seq to the nearest `turn/start`. */
function turnOf(log: readonly SessionEvent[], seq: number): number {
  for (let at = seq; at >= 0; at--) {
    const event = log[at] as SessionEvent
    if (event.type === 'turn/start') return event.data.turn
  }
  return 0
}

describe('TurnIndex', () => {
  it('gives every seq the turn of the newest turn/start at or before it, followed in any chunks as the log grows', () => {
    fc.assert(fc.property(logArb, fc.array(fc.nat(), { maxLength: 8 }), (log, cuts) => {
      const index = new TurnIndex()
      const read: number[] = []
      for (const length of [...cuts.map(cut => cut % (log.length + 1)).sort((a, b) => a - b), log.length]) {
        index.follow(length, seq => { read.push(seq); return log[seq] })
        for (let seq = 0; seq < length; seq++) expect(index.turnOf(seq)).toBe(turnOf(log, seq))
      }
      expect(read).toEqual(log.map((_, seq) => seq)) // each event read once
    }))
  })

  it('answers 0 before the first turn/start (a seeded header)', () => {
    const log = [{ type: 'session/header' }, { type: 'turn/start', data: { turn: 4 } }] as unknown as SessionEvent[]
    const index = new TurnIndex().follow(log.length, seq => log[seq])
    expect([index.turnOf(0), index.turnOf(1), index.turnOf(9)]).toEqual([0, 4, 4])
  })
})
