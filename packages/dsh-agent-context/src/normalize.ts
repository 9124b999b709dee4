/**
 * The host's projection normalizer: validate an `agent/context` result against the surface it was chosen from and
 * bring it to the one form the loop sends and logs, or refuse it with a typed error.
 * @module @dsh-seam/agent-context/normalize
 */

import { inspect } from 'node:util'
import type { ContextSelection } from '@deepseek-ai/dsh-agent'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage, foldSurface } from '@deepseek-ai/dsh-session'
import type { NodeIndex } from './rules.ts'

/**
 * Encode included nodes as runs: one `[first seq, last seq]` pair per stretch of consecutive surface positions.
 * @param surfaceSeqs - message-bearing surface seqs in surface order.
 * @param positions - included positions, ascending.
 * @returns `[first, last]` runs; a run selects exactly the surface nodes from its first seq through its last, in
 * surface order (not a seq interval: after a replace the surface is not ordered by seq). `decodeProjection` decodes them.
 */
export function encodeInclude(surfaceSeqs: readonly number[], positions: readonly number[]): [number, number][] {
  const runs: [number, number][] = []
  for (let i = 0; i < positions.length; i++) {
    const from = positions[i] as number
    while (i + 1 < positions.length && positions[i + 1] === (positions[i] as number) + 1) i++
    runs.push([surfaceSeqs[from] as number, surfaceSeqs[positions[i] as number] as number])
  }
  return runs
}

/** The longest `revision` a listener may return, in UTF-16 code units; it is logged with every projected request. */
export const MAX_REVISION_LENGTH = 200

/**
 * Whether the loop logs a `revision`: a string of at most {@link MAX_REVISION_LENGTH} code units. The loop's rule on
 * write; readers take any revision string a log holds.
 * @param revision - a listener's value (typed, but a plain-JavaScript listener may return anything).
 * @returns true for a valid revision.
 */
export function isValidRevision(revision: unknown): revision is string {
  return typeof revision === 'string' && revision.length <= MAX_REVISION_LENGTH
}

/** Why a projection was refused. */
export type AgentContextErrorCode =
  /** `include` names a seq that never was a message-bearing node of this agent's surface. */
  | 'unknown-seq'
  /** `revision` is not a string of at most `MAX_REVISION_LENGTH` code units (`isValidRevision`). */
  | 'invalid-revision'
  /** A selection of fewer than every node has no `revision`: the logged projection would not name its policy. */
  | 'missing-revision'
  /** More than one `agent/context` listener is in the agent's scope: one policy selects an agent's requests. */
  | 'multiple-listeners'
  /** A listener threw or rejected. */
  | 'listener-failed'
  /** The surface changed while listeners ran, twice in a row. */
  | 'surface-changed'

/** The most characters of a thrown value's description an error message carries. */
const MAX_FAILURE_CHARS = 500

/**
 * A thrown value in one line of at most {@link MAX_FAILURE_CHARS} characters, with the length it had. Describing a
 * value runs its code (a proxy's traps, getters, `toString`); when that throws, the value is named by its type alone.
 * @param error - a caught value.
 * @returns a bounded description.
 */
export function describeFailure(error: unknown): string {
  let text: string
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : inspect(error, { breakLength: Infinity, compact: true, depth: 4 })
  } catch {
    // Swallowed: the value's own code threw while it was described; the error names what kind of value it was instead.
    text = `a thrown ${typeof error} that throws when it is described`
  }
  // One line: an Error's message may hold line breaks, which would split the `turn/end` record a reader scans.
  const line = text.replace(/\s*[\r\n\u2028\u2029]+\s*/gu, ' ')
  if (line.length <= MAX_FAILURE_CHARS) return line
  // Cut before a trailing lead surrogate, so the cut never leaves half a character.
  const cut = /[\uD800-\uDBFF]/u.test(line.charAt(MAX_FAILURE_CHARS - 1)) ? MAX_FAILURE_CHARS - 1 : MAX_FAILURE_CHARS
  return `${line.slice(0, cut)}… (${line.length} characters)`
}

/**
 * A refused `agent/context` projection, naming the agent, the listener revision and the offending values. The message
 * starts with `agent/context [<code>]`: DSH records a failed turn's error as text (`turn/end` `{ message, code:
 * 'UNKNOWN' }`), so the code reaches the log through the message.
 */
export class AgentContextError extends Error {
  override readonly name = 'AgentContextError'

  /**
   * @param code - why the projection was refused.
   * @param agent - the session id of the agent whose request it was.
   * @param revision - the listener's `revision`, when it supplied a valid one.
   * @param values - the offending seqs, generations or refused revision; at most the first eight are shown.
   * @param detail - one sentence on what was wrong.
   * @param cause - the thrown value behind `listener-failed`.
   */
  constructor(
    readonly code: AgentContextErrorCode,
    readonly agent: string,
    readonly revision: string | undefined,
    readonly values: readonly (number | string)[],
    detail: string,
    cause?: unknown,
  ) {
    const shown = values.length === 0 ? '' : `: ${values.slice(0, 8).map(value => typeof value === 'string' ? JSON.stringify(value) : String(value)).join(', ')}${values.length > 8 ? `, … (${values.length} in all)` : ''}`
    super(`agent/context [${code}] for agent ${JSON.stringify(agent)}${revision === undefined ? '' : ` (revision ${JSON.stringify(revision)})`} ${detail}${shown}`, cause === undefined ? undefined : { cause })
  }
}

/**
 * A validated selection: every listed seq is a current node, in surface order, closed under the host's rules. A
 * selection of fewer than every node carries the revision the host logs it with.
 */
export type NormalizedProjection = {
  /** Included seqs in surface order, without duplicates, with the required seqs, whole tool units and a user opening. */
  readonly include: readonly number[]
  /** Their positions in the index, ascending. */
  readonly positions: readonly number[]
  /** How many listener seqs named nodes a compaction replaced (resolved to their replacement or dropped). */
  readonly stale: number
} & (
  /** Every node: the request equals the one built with no listener and nothing is logged. */
  | { readonly isDefault: true; readonly revision?: string }
  /** Fewer nodes, logged with the listener's revision label. */
  | { readonly isDefault: false; readonly revision: string }
)

/** What the normalizer checks a listener result against. */
export interface NormalizeInput {
  /** Session id of the agent, for error messages. */
  readonly agent: string
  /** The message-bearing surface nodes offered to the listeners, with the open turn. */
  readonly index: NodeIndex
  /** Seqs always sent; each is a node of `index`. */
  readonly requiredSeqs: readonly number[]
  /**
   * Where a seq that is not on the surface went: its replacement's seq, `null` when it was replaced by nothing that is
   * still a node, `undefined` when it never was a message-bearing node. Without it every such seq is unknown.
   */
  readonly resolve?: (seq: number) => number | null | undefined
}

/**
 * Validate and normalize one `agent/context` result. Its `revision` must be a string of at most `MAX_REVISION_LENGTH`
 * code units (`isValidRevision`), and is required unless the selection, once closed, is every node: it is logged with
 * the request to name the policy that chose. A seq a
 * compaction replaced resolves to its replacement or is dropped (counted in `stale`); a seq that never was a node is
 * refused. Then duplicates go, `requiredSeqs` join, tool units close, the nearest user input joins when the first node
 * is not one ({@link NodeIndex.close}), and surface order is restored.
 * @param input - the surface and required seqs the listeners were offered.
 * @param selection - the waterfall's result.
 * @returns the normalized projection.
 * @throws {AgentContextError} naming the agent, the revision and the offending values.
 */
export function normalizeSelection(input: NormalizeInput, selection: ContextSelection): NormalizedProjection {
  const { agent, index } = input
  const { include, revision } = selection
  if (revision !== undefined && !isValidRevision(revision)) {
    // A plain-JavaScript listener's value may be anything.
    const value: unknown = revision
    const shown = typeof value === 'string' ? `${value.slice(0, 40)}… (${value.length} code units)` : typeof value
    throw new AgentContextError('invalid-revision', agent, undefined, [shown], `returned a revision that is not a string of at most ${MAX_REVISION_LENGTH} code units`)
  }
  const chosen: number[] = []
  const unknown: number[] = []
  let stale = 0
  for (const seq of include) {
    let at = index.position.get(seq)
    if (at === undefined) {
      const resolved = input.resolve?.(seq)
      if (resolved === undefined) {
        unknown.push(seq)
        continue
      }
      stale++
      if (resolved === null) continue
      at = index.position.get(resolved)
      /* v8 ignore next -- the resolver answers only seqs the index holds; a resolver that does not drops the seq */
      if (at === undefined) continue
    }
    chosen.push(at)
  }
  if (unknown.length > 0) {
    throw new AgentContextError('unknown-seq', agent, revision, [...new Set(unknown)], 'named seqs that never were message-bearing nodes of its surface')
  }
  for (const seq of input.requiredSeqs) {
    const at = index.position.get(seq)
    /* v8 ignore next -- required seqs come from the same index's required(), which only grows */
    if (at !== undefined) chosen.push(at)
  }
  const positions = index.close(chosen)
  const included = positions.map(at => index.seqs[at] as number)
  if (positions.length === index.length) {
    return { include: included, positions, ...revision === undefined ? {} : { revision }, stale, isDefault: true }
  }
  if (revision === undefined) {
    throw new AgentContextError('missing-revision', agent, undefined, [], 'returned a selection of fewer than every node without a revision, which the logged projection names its policy by')
  }
  return { include: included, positions, revision, stale, isDefault: false }
}

/**
 * {@link normalizeSelection} for a live session's offer: seqs a compaction replaced resolve through the session's log,
 * read only when a listener names a seq that is not on the surface.
 * @param agent - session id of the agent, for error messages.
 * @param log - the session log, read on the first stale seq.
 * @param index - the offered nodes, with the open turn.
 * @param requiredSeqs - the offered required seqs.
 * @param selection - the waterfall's result.
 * @returns the normalized projection.
 * @throws {AgentContextError} naming the agent, the revision and the offending values.
 */
export function normalizeOffer(
  agent: string,
  log: () => readonly SessionEvent[],
  index: NodeIndex,
  requiredSeqs: readonly number[],
  selection: ContextSelection,
): NormalizedProjection {
  return normalizeSelection({ agent, index, requiredSeqs, resolve: staleResolver(log, seq => index.position.has(seq)) }, selection)
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
function staleResolver(
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
