/**
 * Which surface span a projected request's pressure is relieved by: a span of nodes the request sends, never one it
 * already leaves out.
 * @module @dsh-seam/compaction-effective-projection/region
 */

/** A surface node and its token price under the meter's heuristic. */
export interface PricedNode {
  readonly seq: number
  readonly tokens: number
}

/** What {@link selectProjectedRange} chooses from. */
export interface ProjectedRegionInput {
  /** Every surface node in surface order, priced (the token meter's `measure().nodes`). */
  readonly nodes: readonly PricedNode[]
  /** Seqs the request sends. */
  readonly sent: ReadonlySet<number>
  /**
   * Seqs never compacted: what the request needs to be answerable (the turn's input, the open tool unit, the tail).
   * Standing context outside the open turn is not among them: it is compacted as the basic engine compacts it (see
   * `NodeIndex.replaceableStandingSeqs`).
   */
  readonly required: ReadonlySet<number>
  /** Minimum priced tail of sent nodes kept verbatim; 0 keeps only the newest sent node. */
  readonly retainTokens: number
  /**
   * Whether no tool call is open across a surface cut. Cut `i` lies before node `i`; cut `nodes.length` lies after
   * the last node.
   */
  readonly balanced: (cut: number) => boolean
}

/** A surface-position span: the seqs of its first and last node, with the sum of their prices. */
export interface ProjectedRange {
  readonly start: number
  readonly end: number
  readonly tokens: number
}

/**
 * Choose the span of sent nodes to compact for one request. The kept tail is the newest sent nodes up to
 * `retainTokens`, extended back to a balanced cut (the basic engine's retained-tail and tool-pair rules). Before that cut, the
 * required nodes stay verbatim and split the sent nodes into runs; each maximal run of consecutive sent, non-required
 * surface nodes is trimmed to balanced edges, and the run with the most tokens wins, the oldest on a tie. A span
 * therefore never contains a node the request leaves out, a protected node, or half of a tool-call unit: the open
 * turn's input stays, and the history before it (standing context outside the open turn included) is compacted.
 * @param input - priced surface, sent and required seqs, retention and cut balance.
 * @returns the span to compact, or `null` when no sent, non-required node lies before the kept tail.
 */
export function selectProjectedRange(input: ProjectedRegionInput): ProjectedRange | null {
  const { nodes, sent, required, retainTokens, balanced } = input
  let keep = nodes.length
  let kept = 0
  for (let i = nodes.length - 1; i >= 0; i--) {
    if (!sent.has((nodes[i] as PricedNode).seq)) continue
    kept += (nodes[i] as PricedNode).tokens
    keep = i
    if (kept >= retainTokens) break
  }
  while (keep > 0 && !balanced(keep)) keep--

  const compactable = nodes.map(node => sent.has(node.seq) && !required.has(node.seq))
  let best: { first: number; last: number; tokens: number } | undefined
  for (let runStart = 0; runStart < keep; runStart++) {
    if (!compactable[runStart]) continue
    let runEnd = runStart
    while (runEnd + 1 < keep && compactable[runEnd + 1]) runEnd++
    let first = runStart
    while (first <= runEnd && !balanced(first)) first++
    let last = runEnd
    while (last >= first && !balanced(last + 1)) last--
    if (first <= last) {
      let tokens = 0
      for (let i = first; i <= last; i++) tokens += (nodes[i] as PricedNode).tokens
      if (best === undefined || tokens > best.tokens) best = { first, last, tokens }
    }
    runStart = runEnd
  }
  if (best === undefined) return null
  return { start: (nodes[best.first] as PricedNode).seq, end: (nodes[best.last] as PricedNode).seq, tokens: best.tokens }
}

/**
 * The seqs a request is expected to send after a compaction replaced some of them: the shadowed seqs leave, the
 * replacement node joins. The host re-runs `agent/context` over the replaced surface, so this is the engine's
 * estimate until the listeners choose again.
 * @param sent - seqs sent before the replacement.
 * @param shadowed - seqs the replacement shadowed.
 * @param replacement - seq of the replacement node.
 * @returns the expected sent seqs.
 */
export function sentAfterReplacement(sent: ReadonlySet<number>, shadowed: readonly number[], replacement: number): Set<number> {
  const next = new Set(sent)
  for (const seq of shadowed) next.delete(seq)
  next.add(replacement)
  return next
}

/**
 * The nodes a request sends after a tool-result prune: a pruned result's replacement where the original was sent.
 * @param sent - the seqs the request sends (or requires).
 * @param pruned - the prune's replacements.
 * @returns the seqs it sends after the prune.
 */
export function sentAfterPrune(
  sent: ReadonlySet<number>,
  pruned: readonly { readonly originalSeq: number; readonly replacementSeq: number }[],
): Set<number> {
  const next = new Set(sent)
  for (const { originalSeq, replacementSeq } of pruned) {
    if (next.delete(originalSeq)) next.add(replacementSeq)
  }
  return next
}
