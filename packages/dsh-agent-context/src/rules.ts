/**
 * The host's rules over surface nodes: tool-call units, the turn's input, standing context, the required set and the
 * opening rule. {@link NodeIndex} is the one home of these rules; the host and the normalizer read it.
 * @module @dsh-seam/agent-context/rules
 */

import { createHash } from 'node:crypto'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { isReplacementSurfaceEvent, isSurfaceEvent } from '@deepseek-ai/dsh-session'

function hasCalls(message: Message): boolean {
  for (const block of message.content) if (block.type === 'tool-call') return true
  return false
}

/**
 * Whether a message is user input (a `user/message` node: the user, an injected or plugin message, a runtime-context
 * snapshot) rather than a tool result or an assistant message.
 * @param message - a surface node's message.
 * @returns true for a user-role message without tool-result blocks.
 */
export function isUserInput(message: Message): boolean {
  if (message.role !== 'user') return false
  for (const block of message.content) if (block.type === 'tool-result') return false
  return true
}

/**
 * The producer a message speaks for: its source `kind`, and for a `plugin` source the plugin id.
 * @param message - a surface node's message.
 * @returns the producer key.
 */
function producerOf(message: Message): string {
  const { source } = message
  return source.kind === 'plugin' ? `plugin:${source.plugin}` : source.kind
}

/**
 * The standing source a message speaks for, when it is standing context: context its producer shows once and keeps in
 * force while it is on the surface, deciding by the surface whether to show it again (workspace instructions, a skill
 * catalog, an invoked skill body, a runtime-context snapshot). Read off the context form the producer declares:
 * `instructions`, `catalog` and `snapshot` stand; `notice`, `relay`, `recall` and undeclared content do not.
 * @param message - a surface node's message.
 * @returns the producer key (`kind`, or `plugin:<id>`) of a standing message, else undefined.
 */
export function standingSource(message: Message): string | undefined {
  const { form } = message.source as { readonly form?: unknown }
  return form === 'instructions' || form === 'catalog' || form === 'snapshot' ? producerOf(message) : undefined
}

/**
 * Message-bearing surface nodes by position, with everything the host's rules read, kept as nodes are appended so
 * that a request's checks cost what it sends, not the surface. A surface replace rebuilds it ({@link NodeIndex.of}).
 */
export class NodeIndex {
  /** Seq of each position, in surface order. */
  readonly seqs: number[] = []
  /** Message of each position, shared with `Session.deriveMessages()`. */
  readonly messages: Message[] = []
  /** Position of each seq. */
  readonly position = new Map<number, number>()
  /** Tool-call unit of each position, or -1: an assistant message with tool calls and the results of its calls. */
  readonly unitOf: number[] = []
  /** Positions of each unit, in surface order. */
  readonly units: number[][] = []
  /**
   * Newest position of each piece of standing context ({@link standingSource}): per producer for `catalog` and
   * `snapshot` messages, per producer and content for `instructions` messages.
   */
  readonly standing = new Map<string, number>()
  /** Position of the first user input, or -1. */
  firstInput = -1
  /** Position of the newest assistant message, or -1. */
  newestAssistant = -1
  /** Seq of the open turn's `turn/start`; user inputs with a larger seq are the turn's input. */
  turnStart = -1
  /** Positions of the open turn's user inputs. */
  turnInputs: number[] = []
  private readonly callUnit = new Map<string, number>()

  /**
   * Index nodes in surface order.
   * @param nodes - message-bearing nodes in surface order.
   * @param turnStart - seq of the open turn's `turn/start` (-1: none).
   * @param sourcesOf - for a node a surface replace wrote, the seqs it replaced ({@link replacedSources}).
   * @returns the index.
   */
  static of(
    nodes: Iterable<{ readonly seq: number; readonly message: Message }>,
    turnStart = -1,
    sourcesOf?: (seq: number) => readonly number[] | undefined,
  ): NodeIndex {
    const index = new NodeIndex()
    index.turnStart = turnStart
    for (const { seq, message } of nodes) index.push(seq, message, sourcesOf?.(seq))
    return index
  }

  /**
   * Index a live log's current nodes: the open turn and each replacement node's sources come from the log.
   * @param nodes - the log's message-bearing surface nodes in surface order.
   * @param events - the session log.
   * @returns the index.
   */
  static forLog(nodes: Iterable<{ readonly seq: number; readonly message: Message }>, events: readonly SessionEvent[]): NodeIndex {
    const eventAt = (seq: number): SessionEvent | undefined => events[seq]
    return NodeIndex.read(nodes, openTurnStart(events.length, eventAt), eventAt)
  }

  /**
   * {@link NodeIndex.forLog} over a log read one event at a time, the open turn already known.
   * @param nodes - the log's message-bearing surface nodes in surface order.
   * @param turnStart - seq of the open turn's `turn/start`.
   * @param eventAt - the event of a seq.
   * @returns the index.
   */
  static read(
    nodes: Iterable<{ readonly seq: number; readonly message: Message }>,
    turnStart: number,
    eventAt: (seq: number) => SessionEvent | undefined,
  ): NodeIndex {
    return NodeIndex.of(nodes, turnStart, seq => replacedSources(seq, eventAt))
  }

  /** How many message-bearing nodes the index holds. */
  get length(): number {
    return this.seqs.length
  }

  /**
   * Open a turn: later user inputs are its input.
   * @param seq - seq of the turn's `turn/start`.
   */
  startTurn(seq: number): void {
    this.turnStart = seq
    this.turnInputs = []
  }

  /**
   * Append a node at the surface end.
   * @param seq - the node's seq.
   * @param message - the message it derives to.
   * @param sources - for a replacement node, the seqs it replaced: it is the turn's input only when one of them is newer
   * than the turn's start (a summary of earlier turns is not).
   */
  push(seq: number, message: Message, sources?: readonly number[]): void {
    const at = this.seqs.length
    this.seqs.push(seq)
    this.messages.push(message)
    this.position.set(seq, at)
    let unit = -1
    if (message.role === 'assistant') {
      this.newestAssistant = at
      if (hasCalls(message)) {
        unit = this.units.length
        this.units.push([at])
        for (const block of message.content) if (block.type === 'tool-call') this.callUnit.set(block.id, unit)
      }
    } else {
      for (const block of message.content) {
        if (block.type !== 'tool-result') continue
        const called = this.callUnit.get(block.toolCallId)
        if (called !== undefined && unit === -1) {
          unit = called
          ;(this.units[unit] as number[]).push(at)
        }
      }
      if (isUserInput(message)) {
        if (this.firstInput === -1) this.firstInput = at
        if (seq > this.turnStart && (sources === undefined || sources.some(source => source > this.turnStart))) this.turnInputs.push(at)
        this.stand(at, message)
      }
    }
    this.unitOf.push(unit)
  }

  /**
   * Record standing context. An `instructions` message stands until its producer publishes the same instructions
   * again (a baseline and each later change, each skill body, stand side by side; keyed by a digest of the content); a
   * `catalog` supersedes its producer's earlier catalog and a `snapshot` its earlier snapshot, and a later message of a
   * snapshot's producer that declares no form (the runtime context's "cleared" marker) supersedes the snapshot.
   */
  private stand(at: number, message: Message): void {
    const { form } = message.source as { readonly form?: unknown }
    const producer = standingSource(message)
    if (form === 'instructions') {
      this.standing.set(`${producer}\u0000instructions\u0000${createHash('sha256').update(JSON.stringify(message.content)).digest('base64')}`, at)
    } else if (producer !== undefined) {
      this.standing.set(`${producer}\u0000${String(form)}`, at)
    } else if (form === undefined) {
      const snapshot = `${producerOf(message)}\u0000snapshot`
      if (this.standing.has(snapshot)) this.standing.set(snapshot, at)
    }
  }

  /**
   * Positions the host always sends, in surface order: the open turn's user inputs, standing context (each distinct
   * `instructions` message of each producer, its newest `catalog` and `snapshot` message), the newest assistant
   * message when it carries tool calls (the unit this step continues), and the tail.
   * Tool-unit closure and the opening rule are applied on top ({@link NodeIndex.close}).
   * @returns required positions, ascending.
   */
  required(): number[] {
    const required = new Set<number>(this.turnInputs)
    for (const at of this.standing.values()) required.add(at)
    if (this.newestAssistant !== -1 && this.unitOf[this.newestAssistant] !== -1) required.add(this.newestAssistant)
    if (this.seqs.length > 0) required.add(this.seqs.length - 1)
    return [...required].sort((a, b) => a - b)
  }

  /**
   * The seqs of {@link NodeIndex.required}, in surface order.
   * @returns required seqs, ascending.
   */
  requiredSeqs(): number[] {
    return this.required().map(at => this.seqs[at] as number)
  }

  /**
   * The seqs of the standing context the host requires that a compaction may still replace, as the basic engine
   * replaces it: the instructions baseline, a skill catalog and a runtime-context snapshot are shown again by their
   * producers once they leave the surface; a skill body or an instructions change lives on only in the summary. The
   * open turn's own input is never among them.
   * @returns standing seqs outside the open turn's input.
   */
  replaceableStandingSeqs(): number[] {
    const input = new Set(this.turnInputs)
    return [...this.standing.values()].filter(at => !input.has(at)).map(at => this.seqs[at] as number)
  }

  /**
   * Close a selection under the host's rules: every chosen unit member brings its whole unit, and when the first chosen
   * node is not user input, the nearest user input before it is chosen (a request the loop opens with a user message
   * without a listener opens with one under any selection). Costs what is chosen, not the surface.
   * @param chosen - positions, in any order, with repeats.
   * @returns the closed positions, ascending, without repeats.
   */
  close(chosen: readonly number[]): number[] {
    const withUnits: number[] = [...chosen]
    for (const at of chosen) {
      const unit = this.unitOf[at] as number
      if (unit !== -1) for (const member of this.units[unit] as number[]) withUnits.push(member)
    }
    const positions = this.ascending(withUnits)
    const first = positions[0]
    if (first === undefined || isUserInput(this.messages[first] as Message)) return positions
    for (let at = first - 1; at >= 0; at--) {
      if (isUserInput(this.messages[at] as Message)) {
        positions.unshift(at)
        break
      }
    }
    return positions
  }

  /** Positions ascending without repeats: a sort for a few, one pass over flags for a large share of the surface. */
  private ascending(positions: readonly number[]): number[] {
    if (positions.length * 16 < this.seqs.length) return [...new Set(positions)].sort((a, b) => a - b)
    const flags = new Uint8Array(this.seqs.length)
    for (const at of positions) flags[at] = 1
    const sorted: number[] = []
    for (let at = 0; at < flags.length; at++) if (flags[at] === 1) sorted.push(at)
    return sorted
  }
}

/**
 * The surface nodes a replace event replaced: its `sourceEventSeqs` that are surface events (`Session.append` requires them to cover
 * the shadowed nodes; they may also name the compaction's own log events).
 * @param seq - a seq of the log.
 * @param eventAt - the event of a seq.
 * @returns the replaced seqs for a replacement surface event, else undefined.
 */
function replacedSources(seq: number, eventAt: (seq: number) => SessionEvent | undefined): readonly number[] | undefined {
  const event = eventAt(seq)
  if (event === undefined || !isReplacementSurfaceEvent(event)) return undefined
  /* v8 ignore next -- a replace always names its sources: Session.append refuses one that shadows a node it does not name */
  return (event.sourceEventSeqs ?? []).filter((source) => {
    const replaced = eventAt(source)
    return replaced !== undefined && isSurfaceEvent(replaced)
  })
}

/**
 * Seq of the open turn's `turn/start`, reading back from the end of a live log.
 * @param length - the log length (`Session.seq`).
 * @param eventAt - the event of a seq.
 * @returns the newest `turn/start` seq, or -1.
 */
export function openTurnStart(length: number, eventAt: (seq: number) => SessionEvent | undefined): number {
  for (let seq = length - 1; seq >= 0; seq--) if (eventAt(seq)?.type === 'turn/start') return seq
  return -1
}
