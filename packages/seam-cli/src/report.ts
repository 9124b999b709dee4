/**
 * The model of `dsh-seam report`: every request of a log against every message-bearing node the log's surface ever
 * held, built beside `LogAnalyzer` from the same request views and summaries `inspect` prints.
 * @module @dsh-seam/cli/report
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { isUserInput, standingSource } from '@dsh-seam/agent-context'
import type { RequestSummary, RequestView, TokenPricer } from './analyze.ts'
import type { NodeCategory } from './figures.ts'
import { categoryOf, CATEGORIES, loggedTokens, sharedPrefix, sourceLabel, textOf, TurnClock } from './figures.ts'

/** A map cell: what one request did with one node. */
export const CELL = {
  /** Not a surface node at the request: appended later. */
  absent: 0,
  /** Sent. */
  sent: 1,
  /** Sent because the host always sends it (`NodeIndex.required`). */
  required: 2,
  /** On the surface, left out by the projection. */
  left: 3,
  /** Was a surface node, replaced by a compaction before the request. */
  replaced: 4,
} as const

/** One map column: a message-bearing node, in log (seq) order. */
export interface ReportNode {
  readonly seq: number
  readonly turn: number
  readonly role: Message['role']
  readonly category: NodeCategory
  readonly source: string
  /**
   * Its whole text as the model was sent it (text and reasoning blocks, tool calls as `→ name(args)`, tool results as
   * `[result <call id>] …`), unescaped: the page writes it as text. Stored once per node, whatever the requests.
   */
  readonly text: string
  readonly tokens: number
  /** Its place in surface order: sorting a request's nodes by it gives the order the request sent them in. */
  readonly order: number
  /** Index of its tool-call unit in the report, when it belongs to one of two or more nodes. */
  readonly unit?: number
  /** Its runtime-context source, for a snapshot. */
  readonly snapshot?: string
}

/** One map row. */
export interface ReportRequest extends RequestSummary {
  /** Surface generation (compactions so far). */
  readonly generation: number
  /** Whether a compaction replaced part of the surface since the previous request. */
  readonly compacted: boolean
  /** Prompt tokens the provider reported for it (`promptTokens` of the usage on its `assistant/message`). */
  reported?: number
  /** The context window the log recorded for it (the newest `request/context` before it). */
  readonly window?: number
  /** Tokens of the prefix shared with the previous request (envelope and leading messages). */
  readonly reusedTokens: number
  /** Seq of the first node of the previous request that this one does not carry at the same place: the cache break. */
  readonly cacheBreak?: number
  /** Listener seqs that named replaced nodes (`request/projection` `stale`). */
  readonly stale: number
  /** Estimated tokens by category; `header` is the system prompt and tool schemas. */
  readonly composition: Readonly<Record<NodeCategory | 'header', number>>
  /** Cells as runs over the report's columns: `[first column, last column, CELL]`, absent cells omitted. */
  readonly cells: [number, number, number][]
  /** Its envelope (system prompt and tools): an index into {@link ReportModel.headers}, -1 without one. */
  readonly header: number
  /** `simulate --report`: the reasons the policy gave for nodes it left out, by column. */
  readonly reasons?: [number, string][]
}

/** A request envelope as sent: the system prompt and the tool schemas (JSON), stored once for all requests sharing it. */
export interface ReportHeader {
  readonly system: string
  readonly tools: string
}

/** Everything the page shows. */
export interface ReportModel {
  readonly session: string
  readonly file: string
  readonly events: number
  readonly nodes: ReportNode[]
  readonly requests: ReportRequest[]
  /** The distinct request envelopes. */
  readonly headers: ReportHeader[]
  /** Seqs of `compaction/summary` events. */
  readonly compactions: number[]
  /** Usage reports and context windows whose numbers are not token counts (null, a string, `1e308`): not drawn. */
  readonly unreadableCounts: number
  /** `simulate --report`: each policy's requests over the same columns, the recorded ones being {@link requests}. */
  readonly variants?: readonly { readonly name: string; readonly requests: ReportRequest[] }[]
}

/**
 * Builds the report model from a log fed one event at a time: `push` each event, and hand `observe` to `LogAnalyzer`
 * so every request it rebuilds lands in the model with the surface it was sent from.
 */
export class ReportBuilder {
  readonly nodes: ReportNode[] = []
  readonly requests: ReportRequest[] = []
  readonly compactions: number[] = []
  readonly headers: ReportHeader[] = []
  private readonly headerIndex = new Map<string, number>()
  private lastHeader: { header: RequestView['request']['header']; index: number } | undefined
  private readonly column = new Map<number, number>()
  private readonly units = new Map<number, number>()
  private readonly turns = new TurnClock()
  private previous: { header: RequestView['request']['header']; messages: readonly Message[]; seqs: readonly number[]; generation: number } | undefined
  private status = new Uint8Array(0)
  /** The index of the previous request and its length then; the columns it sent. */
  private surface: { index: RequestView['index']; length: number } | undefined
  private marked: number[] = []
  private window: number | undefined
  private unreadableCounts = 0

  constructor(private readonly pricer: TokenPricer) {}

  /** @param event - the log's next event, after `LogAnalyzer.push`. */
  push(event: SessionEvent): void {
    this.turns.push(event)
    if (event.type === 'compaction/summary') this.compactions.push(event.seq)
    const logged = loggedTokens(event)
    if (logged.unreadable) this.unreadableCounts++
    if (logged.window !== undefined) this.window = logged.window
    if (logged.prompt !== undefined) {
      const last = this.requests.at(-1)
      if (last !== undefined && last.reported === undefined) last.reported = logged.prompt
    }
  }

  /**
   * The {@link RequestObserver} to give `LogAnalyzer`; `simulate` also calls it with a policy's selection as the view's
   * `included`, and the policy's reasons for what it left out.
   */
  readonly observe = (summary: RequestSummary, view: RequestView, reasons?: ReadonlyMap<number, string>): void => {
    const { index, included, request } = view
    // The same index as the previous request's has only grown at its tail (a replace makes a new one): then only the
    // new nodes and the cells the previous and this request marked change, and the row before them is the previous one.
    const grown = this.surface?.index === index && index.length >= this.surface.length
    const from = grown ? (this.surface as { length: number }).length : 0
    // Nodes new since the previous request were appended after it, so they sort after every column: columns stay in seq order.
    const added: number[] = []
    for (let at = from; at < index.length; at++) if (!this.column.has(index.seqs[at] as number)) added.push(at)
    added.sort((a, b) => (index.seqs[a] as number) - (index.seqs[b] as number))
    const orders = added.length === 0 ? undefined : this.ordersOf(index, from)
    for (const at of added) this.addNode(index.seqs[at] as number, index.messages[at] as Message, index.unitOf[at] as number, view, orders?.get(at) as number)
    if (this.status.length < this.nodes.length) {
      const larger = new Uint8Array(Math.max(this.nodes.length, this.status.length * 2))
      larger.set(this.status)
      this.status = larger
    }
    const status = this.status
    const columnOf = (at: number): number => this.column.get(index.seqs[at] as number) as number
    let changed = 0
    if (grown) {
      changed = this.nodes.length
      for (const c of this.marked) {
        status[c] = CELL.left
        changed = Math.min(changed, c)
      }
      for (let at = from; at < index.length; at++) {
        status[columnOf(at)] = CELL.left
        changed = Math.min(changed, columnOf(at))
      }
    } else {
      for (let c = 0; c < this.nodes.length; c++) if (status[c] !== CELL.absent) status[c] = CELL.replaced
      for (let at = 0; at < index.length; at++) status[columnOf(at)] = CELL.left
    }
    const required = new Set(index.required())
    const composition = { header: summary.tokens, user: 0, assistant: 0, tool: 0, snapshot: 0, plugin: 0 }
    const sentSeqs: number[] = []
    const marked: number[] = []
    for (const at of included) {
      const seq = index.seqs[at] as number
      const c = columnOf(at)
      const node = this.nodes[c] as ReportNode
      status[c] = required.has(at) ? CELL.required : CELL.sent
      if (c < changed) changed = c
      marked.push(c)
      composition[node.category] += node.tokens
      composition.header -= node.tokens
      sentSeqs.push(seq)
    }
    const cells = grown ? rowFrom(this.requests.at(-1)?.cells ?? [], status, changed, this.nodes.length) : runsOf(status, 0, this.nodes.length, [])
    this.surface = { index, length: index.length }
    this.marked = marked
    const prefix = sharedPrefix(this.pricer, this.previous, request)
    const previous = this.previous
    this.requests.push({
      ...summary,
      generation: request.generation,
      ...this.window === undefined ? {} : { window: this.window },
      compacted: previous !== undefined && request.generation !== previous.generation,
      reusedTokens: prefix.tokens,
      ...prefix.breaks && previous !== undefined ? { cacheBreak: previous.seqs[prefix.messages] as number } : {},
      stale: request.projection?.stale ?? 0,
      composition,
      cells,
      header: this.headerOf(request.header),
      ...reasons === undefined || reasons.size === 0 ? {} : { reasons: [...reasons].map(([seq, reason]): [number, string] => [this.column.get(seq) as number, reason]) },
    })
    this.previous = { header: request.header, messages: request.messages, seqs: sentSeqs, generation: request.generation }
  }

  /** The index of a request's envelope, stored once: requests of one log share the header object, else equal JSON. */
  private headerOf(header: RequestView['request']['header']): number {
    if (header === undefined) return -1
    if (this.lastHeader?.header === header) return this.lastHeader.index
    const entry = { system: header.system ?? '', tools: header.tools === undefined ? '' : JSON.stringify(header.tools, null, 1) }
    const key = `${entry.system}\u0000${entry.tools}`
    let index = this.headerIndex.get(key)
    if (index === undefined) {
      index = this.headers.push(entry) - 1
      this.headerIndex.set(key, index)
    }
    this.lastHeader = { header, index }
    return index
  }

  /**
   * The surface-order key of each node new at this request, by position: a node appended at the end keeps its seq; one
   * that took the place of a replaced range (a compaction's summary) goes between its neighbours. Surviving nodes
   * never change order, so sorting any request's nodes by key gives its surface order.
   */
  private ordersOf(index: RequestView['index'], from: number): Map<number, number> {
    const orders = new Map<number, number>()
    const known = (at: number): number | undefined => {
      const column = this.column.get(index.seqs[at] as number)
      return column === undefined ? orders.get(at) : (this.nodes[column] as ReportNode).order
    }
    for (let at = from; at < index.length; at++) {
      if (this.column.has(index.seqs[at] as number)) continue
      let after: number | undefined
      for (let next = at + 1; next < index.length && after === undefined; next++) if (this.column.has(index.seqs[next] as number)) after = known(next)
      const before = at === 0 ? undefined : known(at - 1)
      const seq = index.seqs[at] as number
      orders.set(at, after === undefined ? Math.max(seq, (before ?? -1) + 1) : ((before ?? after - 1) + after) / 2)
    }
    return orders
  }

  private addNode(seq: number, message: Message, unit: number, view: RequestView, order: number): void {
    let unitId: number | undefined
    if (unit !== -1 && (view.index.units[unit]?.length ?? 0) > 1) {
      const first = view.index.seqs[(view.index.units[unit] as number[])[0] as number] as number
      unitId = this.units.get(first) ?? this.units.size
      this.units.set(first, unitId)
    }
    const snapshot = isUserInput(message) ? standingSource(message) : undefined
    this.column.set(seq, this.nodes.length)
    this.nodes.push({
      seq,
      turn: this.turns.turnOf(seq),
      role: message.role,
      category: categoryOf(message),
      source: sourceLabel(message),
      text: textOf(message),
      order,
      tokens: this.pricer.estimateMessage(message),
      ...unitId === undefined ? {} : { unit: unitId },
      ...snapshot === undefined ? {} : { snapshot },
    })
  }

  /**
   * @param file - the log's path.
   * @param session - its session id.
   * @param events - how many events it holds.
   * @returns the model.
   */
  model(file: string, session: string, events: number): ReportModel {
    return { session, file, events, nodes: this.nodes, requests: this.requests, headers: this.headers, compactions: this.compactions, unreadableCounts: this.unreadableCounts }
  }
}

/** Cells of one row as runs of equal status from column `from`, absent cells left out, appended to `runs`. */
function runsOf(status: Uint8Array, from: number, columns: number, runs: [number, number, number][]): [number, number, number][] {
  for (let c = from; c < columns; c++) {
    const value = status[c] as number
    if (value === CELL.absent) continue
    const last = runs.at(-1)
    if (last !== undefined && last[1] === c - 1 && last[2] === value) last[1] = c
    else runs.push([c, c, value])
  }
  return runs
}

/** A row whose cells before column `changed` are the previous row's: its runs there, then the status from `changed` on. */
function rowFrom(previous: readonly (readonly [number, number, number])[], status: Uint8Array, changed: number, columns: number): [number, number, number][] {
  const runs: [number, number, number][] = []
  for (const [first, last, value] of previous) {
    if (first >= changed) break
    runs.push([first, Math.min(last, changed - 1), value])
  }
  return runsOf(status, changed, columns, runs)
}

/** The categories in composition order, header first. */
export const COMPOSITION_KEYS: readonly (NodeCategory | 'header')[] = ['header', ...CATEGORIES]
