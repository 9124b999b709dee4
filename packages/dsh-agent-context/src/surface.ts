/**
 * The model-visible surface folded from a session log one event at a time, like the session's `SurfaceManager`, with its
 * message-bearing nodes indexed for the host's rules.
 * @module @dsh-seam/agent-context/surface
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage, isSurfaceEvent } from '@deepseek-ai/dsh-session'
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
   * Fold the next event of a log the session accepted (`Session.append` and the log reader validate its surface ops).
   * @param event - the next event of the log.
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
