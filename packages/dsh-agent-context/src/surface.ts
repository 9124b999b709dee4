/**
 * The model-visible surface of a session log, folded one event at a time by the session's own `SurfaceManager`, with
 * its message-bearing nodes indexed for the host's rules.
 * @module @dsh-seam/agent-context/surface
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { SurfaceManager } from '@deepseek-ai/dsh-session/surface'
import type { NodesMark } from './nodes.ts'
import { appendedNodes, NodeIndex } from './nodes.ts'

/** A log's surface, folded event by event. */
export class SurfaceFold {
  /** The message-bearing nodes, with the open turn. */
  index = new NodeIndex()
  /** The events folded so far, by seq: the fold and a replacement node's sources read them, as on a live session. */
  private readonly events: SessionEvent[] = []
  private readonly surface = new SurfaceManager(this.events)
  private mark: NodesMark | undefined

  /** Every surface seq, in surface order. */
  get nodes(): readonly number[] {
    return this.surface.nodes
  }

  /** The surface's replace generation. */
  get generation(): number {
    return this.surface.replaceGeneration
  }

  /**
   * Fold the next event of a log the session accepted (`Session.append` and the log reader validate its surface ops).
   * @param event - the next event of the log.
   */
  apply(event: SessionEvent): void {
    this.events.push(event)
    if (event.type === 'turn/start') this.index.startTurn(event.seq)
    const eventAt = (seq: number): SessionEvent => this.events[seq] as SessionEvent
    const { added, extends: extending, mark } = appendedNodes(this.surface, this.mark, eventAt)
    this.mark = mark
    if (!extending) {
      this.index = NodeIndex.read(added, this.index.turnStart, eventAt)
      return
    }
    for (const node of added) this.index.push(node.seq, node.message)
  }
}
