/**
 * The model-visible surface folded from a session log one event at a time, like the session's `SurfaceManager`, with its
 * message-bearing nodes indexed for the host's rules; and the resolution of seqs a compaction replaced.
 * @module @dsh-seam/agent-context/surface
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage, foldSurface, isSurfaceEvent } from '@deepseek-ai/dsh-session'
import { ReplayError } from './errors.ts'
import { NodeIndex, replacedSources } from './nodes.ts'

/** A log's surface, folded event by event. */
export class SurfaceFold {
  /** Every surface seq, in surface order. */
  readonly nodes: number[] = []
  /** The message-bearing nodes, with the open turn. */
  index = new NodeIndex()
  /** The surface's replace generation. */
  generation = 0
  /** The events folded so far, by seq: a replacement node's sources are read from them, as on a live session. */
  private readonly events: SessionEvent[] = []

  /**
   * Fold the next event.
   * @param event - the next event of the log.
   * @throws {ReplayError} when a replace names a range that is not on the surface.
   */
  apply(event: SessionEvent): void {
    this.events[event.seq] = event
    if (event.type === 'turn/start') {
      this.index.startTurn(event.seq)
      return
    }
    if (!isSurfaceEvent(event)) return
    const op = event.surfaceOp
    const message = deriveEventMessage(event)
    if (op === 'append') {
      this.nodes.push(event.seq)
      if (message !== null) this.index.push(event.seq, message)
      return
    }
    const startIdx = this.nodes.indexOf(op.start)
    const endIdx = this.nodes.indexOf(op.end)
    if (startIdx === -1 || endIdx === -1 || startIdx > endIdx) {
      throw new ReplayError('invalid-surface', event.seq, `surface replace [${op.start}, ${op.end}] is not a range of the surface`)
    }
    this.nodes.splice(startIdx, endIdx - startIdx + 1, event.seq)
    this.generation += 1
    const before = this.index
    const messageOf = (seq: number): Message | undefined => {
      if (seq === event.seq) return message ?? undefined
      const at = before.position.get(seq)
      return at === undefined ? undefined : before.messages[at]
    }
    const nodes: { seq: number; message: Message }[] = []
    for (const seq of this.nodes) {
      const kept = messageOf(seq)
      if (kept !== undefined) nodes.push({ seq, message: kept })
    }
    this.index = NodeIndex.of(nodes, before.turnStart, seq => replacedSources(seq, at => this.events[at]))
  }
}

/**
 * Resolve seqs a listener named that are not on the current surface: a seq a compaction replaced resolves to the
 * node that replaced it (transitively), or to `null` when that node is gone or bears no message; a seq that never
 * was a message-bearing surface node resolves to `undefined`. Folds the log once, on first use, with the session's own
 * `foldSurface`.
 * @param log - the session log, read on first use.
 * @param onSurface - whether a seq is a current message-bearing node.
 * @returns the resolver.
 */
export function staleResolver(
  log: () => readonly SessionEvent[],
  onSurface: (seq: number) => boolean,
): (seq: number) => number | null | undefined {
  let events: readonly SessionEvent[] | undefined
  let replacedBy: ReadonlyMap<number, number> | undefined
  return (seq) => {
    if (events === undefined || replacedBy === undefined) {
      events = log()
      const replaced = new Map<number, number>()
      for (const replacement of foldSurface(events).replacements) {
        for (const shadowed of replacement.shadowedSeqs) replaced.set(shadowed, replacement.seq)
      }
      replacedBy = replaced
    }
    const event = events[seq]
    if (event === undefined || deriveEventMessage(event) === null || !replacedBy.has(seq)) return undefined
    let current = seq
    for (let next = replacedBy.get(current); next !== undefined; next = replacedBy.get(current)) current = next
    return onSurface(current) ? current : null
  }
}

/**
 * A value that changes whenever a surface moves: an append, a replace, or anything that changes its length or tail.
 * Two listeners' views of one surface are the same surface iff their marks are equal.
 * @param surface - a session surface.
 * @returns the mark.
 */
export function surfaceMark(surface: { readonly nodes: readonly number[]; readonly replaceGeneration: number }): string {
  return `${surface.replaceGeneration}:${surface.nodes.length}:${surface.nodes.at(-1) ?? ''}`
}
