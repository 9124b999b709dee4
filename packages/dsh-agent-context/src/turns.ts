/**
 * The turn of a log seq, for `agent/context` policies that select by turn ("the newest N turns", "the turns that
 * mention X"): an offered node carries its seq, and the log's `turn/start` events mark where each turn begins. The
 * index is built as events arrive (each event is read once, however many requests the listener serves), and a lookup
 * is a binary search.
 * @module @dsh-seam/agent-context/turns
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'

/** Where each turn of one session's log starts; {@link TurnIndex.follow} it once per request, before reading. */
export class TurnIndex {
  readonly #starts: number[] = []
  readonly #turns: number[] = []
  #read = 0

  /**
   * Reads the events appended since the previous call.
   * @param length - the log length (`Session.seq`).
   * @param eventAt - the event of a seq (`sessionEventAt(session)`).
   * @returns this index.
   */
  follow(length: number, eventAt: (seq: number) => SessionEvent | undefined): this {
    for (let seq = this.#read; seq < length; seq++) {
      const event = eventAt(seq)
      if (event?.type === 'turn/start') {
        this.#starts.push(seq)
        this.#turns.push(event.data.turn)
      }
    }
    this.#read = Math.max(this.#read, length)
    return this
  }

  /**
   * The turn a seq was written in: that of the newest `turn/start` at or before it. A compaction summary belongs to the
   * turn that compacted, not to the turns it replaces.
   * @param seq - a seq the index has read.
   * @returns the turn number, or 0 for a seq before the first `turn/start` (a seeded header).
   */
  turnOf(seq: number): number {
    let low = 0
    let high = this.#starts.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((this.#starts[mid] as number) <= seq) low = mid + 1
      else high = mid
    }
    return low === 0 ? 0 : this.#turns[low - 1] as number
  }
}
