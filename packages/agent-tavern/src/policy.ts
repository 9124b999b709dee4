/**
 * The `agent-managed` selection policy: a pure, deterministic choice of the surface nodes one request sends.
 *
 * A request sends the pinned nodes (node 0, the host's required seqs, the newest node of each standing source: each
 * context source's snapshot, the lore among them, and each reminder kind; each with its whole tool unit), every node from the forgetting boundary to the tail (the recent turns), and the
 * retrieved older nodes chosen when the boundary last moved. The boundary sits on a turn start and only moves
 * forward: when the recent turns exceed their budget it advances by whole turns, freeing at least `blockTokens`, and
 * only then are the older nodes re-ranked. Between advances every request extends the previous one, so consecutive
 * requests share their whole prefix (provider KV cache). Budgets are provider tokens: the meter's estimates are
 * scaled by the calibration factor projection-aware compaction derives from provider usage.
 * @module @dsh-seam/agent-tavern/policy
 */

import { createHash } from 'node:crypto'
import { AgentTavernError } from './errors.ts'
import { relevance } from './lexical.ts'

/** Version of the selection rules; part of every `revision`. */
const POLICY_VERSION = 2

/** Shares of the route's context window. */
interface PolicyShares {
  /** Header (system prompt, tools) and pinned nodes; what exceeds it is taken from `recent`. */
  readonly kernel: number
  /** Recent turns, from the forgetting boundary to the tail. */
  readonly recent: number
  /** Older nodes ranked by relevance, importance, freshness and credibility. */
  readonly retrieved: number
  /** Reserved for the reply: requests never exceed `(1 - reply) * contextWindow` unless pinned nodes alone do. */
  readonly reply: number
}

/**
 * Weights of the retrieval score `relevance * w.relevance + importance * w.importance + freshness * w.freshness +
 * credibility * w.credibility`.
 */
interface PolicyWeights {
  readonly relevance: number
  readonly importance: number
  readonly freshness: number
  readonly credibility: number
}

/** The policy's tunables. */
export interface PolicyConfig {
  readonly shares: PolicyShares
  /** The least a boundary advance frees, in provider tokens; larger blocks mean fewer prefix changes and larger requests. */
  readonly blockTokens: number
  readonly weights: PolicyWeights
}

/** One surface node as the policy sees it. */
export interface PolicyNode {
  readonly seq: number
  /** Its message's token estimate. */
  readonly tokens: number
  /** Whether the boundary may sit here: user input that is not standing context (the user's, or imported history). */
  readonly turnStart: boolean
  /**
   * The standing source this node belongs to, when it is one: a context source's snapshot or a reminder kind. The
   * newest node of each standing source is pinned.
   */
  readonly standing?: string
  /** Lexical terms of its text. */
  readonly terms: readonly string[]
  /** Importance in [0, 1]; 0 means the node is retrieved only for its relevance. */
  readonly importance: number
  /** How far its source is to be believed, in [0, 1] (0004 §8 "source credibility"): ranks candidates, never admits one. */
  readonly credibility: number
}

/** Everything one selection depends on besides the previous state. */
export interface PolicyInput {
  /** Message-bearing surface nodes in surface order. */
  readonly nodes: readonly PolicyNode[]
  /** Seqs the host always sends. */
  readonly requiredSeqs: readonly number[]
  /** Tool units: each member's seq mapped to all members' seqs. */
  readonly units: ReadonlyMap<number, readonly number[]>
  /** Terms of the current user message. */
  readonly query: readonly string[]
  /** Tokens of the system prompt and tool schemas. */
  readonly headerTokens: number
  /** The route's context window in tokens. */
  readonly contextWindow: number
  /** Provider tokens per estimated token (`calibrationFactor`, at least 1); 1 without provider usage. */
  readonly calibration: number
  /** The index of `nodes` a caller following a growing surface keeps; without it the policy builds one ({@link policyIndex}). */
  readonly index?: PolicyIndex
}

/**
 * What a request would otherwise reread every node for. A caller's own index must describe `PolicyInput.nodes`
 * exactly: every node's position, and for each standing source the seq of its newest node.
 */
export interface PolicyIndex {
  /** Each node's position in `nodes`, by seq. */
  readonly position: ReadonlyMap<number, number>
  /** Seq of the newest node of each standing source. */
  readonly standing: ReadonlyMap<string, number>
}

/**
 * Index a node array from scratch.
 * @param nodes - the surface.
 * @returns its index.
 */
export function policyIndex(nodes: readonly PolicyNode[]): PolicyIndex {
  const position = new Map<number, number>()
  const standing = new Map<string, number>()
  for (const [at, node] of nodes.entries()) {
    position.set(node.seq, at)
    if (node.standing !== undefined) standing.set(node.standing, node.seq)
  }
  return { position, standing }
}

/** What a selection carries to the next one: the cache epoch. */
export interface PolicyState {
  /** Seq of the first recent node. */
  readonly boundary: number
  /** Seqs before the boundary chosen at the epoch's start (pinned and retrieved). */
  readonly kept: readonly number[]
}

/** Token budgets derived from the shares and the context window. */
export interface PolicyBudget {
  readonly kernel: number
  readonly recent: number
  readonly retrieved: number
  /** The request cap: the window minus the reply share. */
  readonly input: number
}

/** One request's selection. */
export interface PolicySelection {
  /** Included seqs in surface order. */
  readonly include: readonly number[]
  readonly state: PolicyState
  /** Whether a new epoch began: the boundary moved or the previous state no longer matched the surface. */
  readonly advanced: boolean
  /** Header plus included node tokens (the meter's estimate). */
  readonly tokens: number
  /** `tokens` times the calibration factor, rounded up: what the cap bounds. */
  readonly calibratedTokens: number
  /** Budgets in provider tokens. */
  readonly budget: PolicyBudget
}

/**
 * Check a policy config.
 * @param config - the config to check.
 * @throws {AgentTavernError} `invalid-config` naming the field.
 */
export function assertPolicyConfig(config: PolicyConfig): void {
  const { shares, weights, blockTokens } = config
  for (const [name, value] of Object.entries(shares)) {
    if (!(value >= 0 && value <= 1)) throw new AgentTavernError('invalid-config', undefined, `policy share "${name}" is ${value}, not in [0, 1]`)
  }
  const sum = shares.kernel + shares.recent + shares.retrieved + shares.reply
  if (sum > 1) throw new AgentTavernError('invalid-config', undefined, `policy shares sum to ${sum}, more than the whole context window`)
  if (!Number.isSafeInteger(blockTokens) || blockTokens < 1) throw new AgentTavernError('invalid-config', undefined, `policy blockTokens is ${blockTokens}, not a positive integer`)
  for (const [name, value] of Object.entries(weights)) {
    if (!(value >= 0 && Number.isFinite(value))) throw new AgentTavernError('invalid-config', undefined, `policy weight "${name}" is ${value}, not a finite non-negative number`)
  }
}

/**
 * The budgets a context window yields.
 * @param config - the policy config.
 * @param contextWindow - the route's context window in tokens.
 * @returns the budgets, floored to whole tokens.
 * @throws {AgentTavernError} `invalid-config` when `blockTokens` exceeds the recent budget, so the boundary could not advance by a block.
 */
export function budgetFor(config: PolicyConfig, contextWindow: number): PolicyBudget {
  const { shares } = config
  const budget = {
    kernel: Math.floor(shares.kernel * contextWindow),
    recent: Math.floor(shares.recent * contextWindow),
    retrieved: Math.floor(shares.retrieved * contextWindow),
    input: Math.floor((1 - shares.reply) * contextWindow),
  }
  if (config.blockTokens > budget.recent) {
    throw new AgentTavernError('invalid-config', undefined, `policy blockTokens ${config.blockTokens} exceeds the recent budget ${budget.recent} tokens (recent share ${shares.recent} of a ${contextWindow}-token context window); lower blockTokens to at most ${budget.recent} or raise the recent share to at least ${Math.ceil(config.blockTokens / contextWindow * 10_000) / 10_000}`)
  }
  if (budget.input < 1) throw new AgentTavernError('invalid-config', undefined, `policy reply share ${shares.reply} leaves no input budget in a ${contextWindow}-token context window`)
  return budget
}

/**
 * The `revision` a policy config labels its projections with: the policy version and a hash of the config.
 * @param config - the policy config.
 * @returns e.g. `agent-tavern/policy@1#3f2a9c01d4e7`.
 */
export function policyRevision(config: PolicyConfig): string {
  const hash = createHash('sha256').update(stableJson(config)).digest('hex').slice(0, 12)
  return `agent-tavern/policy@${POLICY_VERSION}#${hash}`
}

function stableJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${stableJson(inner)}`).join(',')}}`
}

/** Per-selection facts shared by the steps below. */
interface Surface {
  readonly input: PolicyInput
  readonly config: PolicyConfig
  readonly index: ReadonlyMap<number, number>
  readonly pinned: ReadonlySet<number>
  /**
   * Tokens of the unpinned nodes at positions `i..n-1`, summed from the tail on demand: between boundary advances a
   * request reads only its recent turns, so its cost does not grow with the log.
   */
  readonly recentFrom: (i: number) => number
}

function unitOf(input: PolicyInput, seq: number): readonly number[] {
  return input.units.get(seq) ?? [seq]
}

/** Node 0, the host's required seqs and the newest node of each standing source, each with its whole tool unit. */
function pinnedSeqs(input: PolicyInput, index: PolicyIndex): Set<number> {
  const pinned = new Set<number>()
  const pin = (seq: number): void => { for (const member of unitOf(input, seq)) pinned.add(member) }
  const first = input.nodes[0]
  if (first !== undefined) pin(first.seq)
  for (const seq of input.requiredSeqs) pin(seq)
  for (const seq of index.standing.values()) pin(seq)
  return pinned
}

function surfaceOf(input: PolicyInput, config: PolicyConfig): Surface {
  const { nodes } = input
  const index = input.index ?? policyIndex(nodes)
  const pinned = pinnedSeqs(input, index)
  // tail[k]: tokens of the unpinned nodes among the last k.
  const tail = [0]
  const recentFrom = (i: number): number => {
    for (let k = tail.length; k <= nodes.length - i; k++) {
      const node = nodes[nodes.length - k] as PolicyNode
      tail.push((tail[k - 1] as number) + (pinned.has(node.seq) ? 0 : node.tokens))
    }
    return tail[nodes.length - i] as number
  }
  return { input, config, index: index.position, pinned, recentFrom }
}

/** The first turn start after `from` that frees at least `need` tokens, else the last turn start after it (or `from`). */
function advance(surface: Surface, from: number, need: number): number {
  const { recentFrom, input: { nodes } } = surface
  let last = from
  for (let at = from + 1; at < nodes.length; at++) {
    if (!(nodes[at] as PolicyNode).turnStart) continue
    last = at
    if (recentFrom(from) - recentFrom(at) >= need) return at
  }
  return last
}

/** Rank the unpinned tool units and nodes before `boundary`; take the best that fit `budget`. */
function retrieve(surface: Surface, boundary: number, budget: number): number[] {
  const { input, config, pinned } = surface
  const { nodes, query } = input
  const freshnessScale = Math.max(1, nodes.length - 1)
  const groups = new Map<number, { members: readonly number[]; tokens: number; terms: Set<string>; importance: number; credibility: number; last: number }>()
  for (let i = 0; i < boundary; i++) {
    const node = nodes[i] as PolicyNode
    if (pinned.has(node.seq)) continue
    const members = unitOf(input, node.seq)
    const key = members[0] as number
    let group = groups.get(key)
    if (group === undefined) groups.set(key, group = { members, tokens: 0, terms: new Set(), importance: 0, credibility: 0, last: i })
    group.tokens += node.tokens
    for (const term of node.terms) group.terms.add(term)
    group.importance = Math.max(group.importance, node.importance)
    group.credibility = Math.max(group.credibility, node.credibility)
    group.last = Math.max(group.last, i)
  }
  const { weights } = config
  const ranked = [...groups.values()]
    .map(group => ({ group, match: relevance(query, group.terms) }))
    .filter(({ group, match }) => match > 0 || group.importance > 0)
    .map(({ group, match }) => ({
      group,
      score: match * weights.relevance + group.importance * weights.importance + (group.last / freshnessScale) * weights.freshness
        + group.credibility * weights.credibility,
    }))
    .sort((a, b) => b.score - a.score || b.group.last - a.group.last)
  const kept: number[] = []
  let left = budget
  for (const { group } of ranked) {
    if (group.tokens > left) continue
    left -= group.tokens
    kept.push(...group.members)
  }
  return kept
}

/** Whether a previous state still describes this surface: its seqs are on it and it keeps every pinned node before its boundary. */
function validState(surface: Surface, state: PolicyState | undefined): state is PolicyState {
  if (state === undefined) return false
  const { index, pinned } = surface
  const boundary = index.get(state.boundary)
  if (boundary === undefined || !state.kept.every(seq => index.has(seq))) return false
  const kept = new Set(state.kept)
  for (const seq of pinned) if ((index.get(seq) as number) < boundary && !kept.has(seq)) return false
  return true
}

/**
 * Choose the nodes one request sends.
 * @param input - the surface, required seqs, tool units, query terms, header tokens, context window and calibration.
 * @param config - the policy config ({@link assertPolicyConfig}).
 * @param previous - the state the previous selection returned; a state naming seqs no longer on the surface, or not
 *   keeping a node pinned before its boundary (after a compaction), starts a new epoch.
 * @returns the selection and the state for the next one.
 * @throws {AgentTavernError} `invalid-config` from {@link budgetFor}.
 */
export function selectContext(input: PolicyInput, config: PolicyConfig, previous?: PolicyState): PolicySelection {
  const provider = budgetFor(config, input.contextWindow)
  const factor = Math.max(1, input.calibration)
  const budget = { kernel: Math.floor(provider.kernel / factor), recent: Math.floor(provider.recent / factor), retrieved: Math.floor(provider.retrieved / factor), input: Math.floor(provider.input / factor) }
  const block = Math.max(1, Math.floor(config.blockTokens / factor))
  const { nodes, headerTokens } = input
  const result = (include: number[], state: PolicyState, advanced: boolean, tokens: number): PolicySelection =>
    ({ include, state, advanced, tokens, calibratedTokens: Math.ceil(tokens * factor), budget: provider })
  if (nodes.length === 0) return result([], { boundary: -1, kept: [] }, true, headerTokens)
  const surface = surfaceOf(input, config)
  const { pinned, recentFrom, index } = surface
  let pinnedTokens = 0
  for (const seq of pinned) {
    const at = index.get(seq)
    if (at !== undefined) pinnedTokens += (nodes[at] as PolicyNode).tokens
  }
  const kernelTokens = headerTokens + pinnedTokens
  const recentBudget = Math.max(0, budget.recent - Math.max(0, kernelTokens - budget.kernel))

  const carried = validState(surface, previous)
  let boundary = carried ? index.get(previous.boundary) as number : 0
  let advanced = !carried
  const recent = recentFrom(boundary)
  if (recent > recentBudget) {
    const moved = advance(surface, boundary, Math.max(recent - recentBudget, block))
    advanced ||= moved !== boundary
    boundary = moved
  }
  let kept = carried && !advanced ? previous.kept : retrieve(surface, boundary, budget.retrieved)

  const keptTokens = (seqs: readonly number[]): number =>
    seqs.reduce((sum, seq) => sum + (pinned.has(seq) ? 0 : (nodes[index.get(seq) as number] as PolicyNode).tokens), 0)
  const fixed = (at: number): number => kernelTokens + recentFrom(at)
  if (fixed(boundary) + keptTokens(kept) > budget.input) {
    while (fixed(boundary) > budget.input) {
      const next = advance(surface, boundary, Math.max(fixed(boundary) - budget.input, block))
      if (next === boundary) break
      boundary = next
    }
    kept = retrieve(surface, boundary, Math.max(0, Math.min(budget.retrieved, budget.input - fixed(boundary))))
    advanced = true
  }

  const before = new Set<number>()
  for (const seq of [...pinned, ...kept]) {
    const at = index.get(seq)
    if (at !== undefined && at < boundary) before.add(at)
  }
  const include: number[] = []
  let tokens = headerTokens
  const send = (at: number): void => {
    const node = nodes[at] as PolicyNode
    include.push(node.seq)
    tokens += node.tokens
  }
  for (const at of [...before].sort((a, b) => a - b)) send(at)
  const keptBefore = [...include]
  for (let at = boundary; at < nodes.length; at++) send(at)
  const boundarySeq = (nodes[boundary] as PolicyNode).seq
  return result(include, { boundary: boundarySeq, kept: keptBefore }, advanced, tokens)
}
