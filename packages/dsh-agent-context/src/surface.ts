/**
 * The model-visible surface of a session log, folded one event at a time by the session's own `SurfaceManager`, with
 * its message-bearing nodes indexed for the host's rules.
 * @module @dsh-seam/agent-context/surface
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { SurfaceManager } from '@deepseek-ai/dsh-session/surface'
import type { NodesMark } from './nodes.ts'
import { appendedNodes, NodeIndex } from './nodes.ts'

/**
 * A log's surface, folded event by event: what a live session's requests are chosen from (the host follows the log
 * with one) and what a replay rebuilds them from, by the same code.
 */
export class SurfaceFold {
  /** The message-bearing nodes, with the open turn. */
  index = new NodeIndex()
  /**
   * The message-bearing nodes in surface order, one frozen node per position of {@link SurfaceFold.index}, and their
   * seqs: the lists a host offers as they are, so a request copies neither. They grow in place as nodes are appended
   * and are replaced when a compaction replaces nodes; the index keeps its own, so a write to them reaches no request.
   */
  contextNodes: ContextNode[] = []
  /** The seqs of {@link SurfaceFold.contextNodes}, in the same order. */
  contextSeqs: number[] = []
  /** The events folded so far, by seq: the fold and a replacement node's sources read them, as on a live session. */
  readonly events: SessionEvent[] = []
  private readonly surface = new SurfaceManager(this.events)
  private nodesMark: NodesMark | undefined

  /** Every surface seq, in surface order. */
  get nodes(): readonly number[] {
    return this.surface.nodes
  }

  /** How many events are folded: the seq of the next one. */
  get length(): number {
    return this.events.length
  }

  /** The surface's replace generation. */
  get generation(): number {
    return this.surface.replaceGeneration
  }

  /** A value that changes whenever the surface moves: an append, a replace, or anything that changes its length or tail. */
  get mark(): string {
    const { nodes } = this.surface
    return `${this.surface.replaceGeneration}:${nodes.length}:${String(nodes.at(-1))}`
  }

  /**
   * Fold the next event of a log the session accepted (`Session.append` and the log reader validate its surface ops).
   * @param event - the next event of the log.
   */
  apply(event: SessionEvent): void {
    this.events.push(event)
    if (event.type === 'turn/start') this.index.startTurn(event.seq)
    const eventAt = (seq: number): SessionEvent => this.events[seq] as SessionEvent
    const { added, extends: extending, mark } = appendedNodes(this.surface, this.nodesMark, eventAt)
    this.nodesMark = mark
    if (!extending) {
      this.index = NodeIndex.read(added, this.index.turnStart, eventAt)
      this.contextNodes = [...added]
      this.contextSeqs = added.map(node => node.seq)
      return
    }
    for (const node of added) {
      this.index.push(node.seq, node.message)
      this.contextNodes.push(node)
      this.contextSeqs.push(node.seq)
    }
  }
}
