/**
 * The model-visible surface of a session log, folded one event at a time by the session's own `SurfaceManager`, with
 * its message-bearing nodes by position.
 * @module @dsh-seam/agent-context/surface
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { SurfaceManager } from '@deepseek-ai/dsh-session/surface'
import type { NodesMark } from './nodes.ts'
import { appendedNodes } from './nodes.ts'

/** What one folded event did to the message-bearing nodes. */
export interface NodesChange {
  /** The nodes it added at the end, or every node when it replaced them. */
  readonly added: readonly ContextNode[]
  /** Whether `added` extends the nodes before it (`false`: a replace; they are all the nodes now). */
  readonly extends: boolean
}

/**
 * A log's surface, folded event by event, with its message-bearing nodes in surface order: what a host follows a live
 * session's log with (building its own rules on {@link SurfaceFold.apply}'s changes) and what request replay rebuilds
 * requests from, by the same code.
 */
export class SurfaceFold {
  private readonly log: SessionEvent[] = []
  private readonly surface = new SurfaceManager(this.log)
  private nodesMark: NodesMark | undefined
  private nodeList: ContextNode[] = []
  private seqList: number[] = []
  private messageList: Message[] = []
  private positions = new Map<number, number>()

  /**
   * The message-bearing nodes, in surface order: one list that grows as nodes are appended and is replaced when a
   * compaction replaces nodes, so a host offers it as it is and a request copies nothing.
   */
  get contextNodes(): readonly ContextNode[] {
    return this.nodeList
  }

  /** The seqs of {@link SurfaceFold.contextNodes}, in the same order. */
  get contextSeqs(): readonly number[] {
    return this.seqList
  }

  /** The messages of {@link SurfaceFold.contextNodes}, in the same order. */
  get messages(): readonly Message[] {
    return this.messageList
  }

  /** The position of each message-bearing seq in {@link SurfaceFold.contextNodes}. */
  get position(): ReadonlyMap<number, number> {
    return this.positions
  }

  /** The events folded so far, by seq. */
  get events(): readonly SessionEvent[] {
    return this.log
  }

  /** How many events are folded: the seq of the next one. */
  get length(): number {
    return this.log.length
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
   * @returns the nodes it added or replaced.
   */
  apply(event: SessionEvent): NodesChange {
    this.log.push(event)
    const { added, extends: extending, mark } = appendedNodes(this.surface, this.nodesMark, seq => this.log[seq] as SessionEvent)
    this.nodesMark = mark
    if (!extending) {
      this.nodeList = [...added]
      this.seqList = []
      this.messageList = []
      this.positions = new Map()
    }
    for (const node of added) {
      if (extending) this.nodeList.push(node)
      this.positions.set(node.seq, this.seqList.length)
      this.seqList.push(node.seq)
      this.messageList.push(node.message)
    }
    return { added, extends: extending }
  }
}
