import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AgentTavernError } from '../src/errors.ts'
import type { PolicyConfig, PolicyInput, PolicyNode, PolicySelection, PolicyState } from '../src/policy.ts'
import { assertPolicyConfig, budgetFor, policyRevision, selectContext } from '../src/policy.ts'

const config: PolicyConfig = {
  shares: { kernel: 0.05, recent: 0.2, retrieved: 0.05, reply: 0.1 },
  blockTokens: 300,
  weights: { relevance: 100, importance: 10, freshness: 1, credibility: 5 },
}

/** One generated turn: a user message, an optional context snapshot, tool units, a reply. */
interface TurnSpec {
  readonly userTokens: number
  readonly words: readonly string[]
  readonly snapshot: 'a' | 'b' | undefined
  readonly tools: readonly { callTokens: number; resultTokens: number; importance: number }[]
  readonly replyTokens: number
}

/** A growing session: nodes, tool units and the seq counter, built turn by turn like a log. */
class Surface {
  readonly nodes: PolicyNode[] = []
  readonly units = new Map<number, readonly number[]>()
  private seq = 3

  add(turn: TurnSpec): number[] {
    const added: number[] = []
    const push = (node: Omit<PolicyNode, 'seq' | 'credibility'> & { credibility?: number }): number => {
      this.seq += 1 + (this.seq % 3)
      this.nodes.push({ credibility: node.turnStart ? 1 : 0.5, ...node, seq: this.seq })
      added.push(this.seq)
      return this.seq
    }
    push({ tokens: turn.userTokens, turnStart: true, terms: turn.words, importance: 0 })
    if (turn.snapshot !== undefined) push({ tokens: 30, turnStart: false, standing: turn.snapshot, terms: [], importance: 0 })
    for (const tool of turn.tools) {
      const call = push({ tokens: tool.callTokens, turnStart: false, terms: ['tool'], importance: tool.importance })
      const result = push({ tokens: tool.resultTokens, turnStart: false, terms: turn.words, importance: 0 })
      this.units.set(call, [call, result]).set(result, [call, result])
    }
    push({ tokens: turn.replyTokens, turnStart: false, terms: turn.words.slice(1), importance: 0 })
    return added
  }

  /** The input of a request at the start of the newest turn: its user message (and snapshot) is required. */
  input(contextWindow: number, headerTokens = 200, calibration = 1): PolicyInput {
    const last = this.nodes.findLastIndex(node => node.turnStart)
    const required = this.nodes.slice(last).map(node => node.seq)
    return { nodes: [...this.nodes], requiredSeqs: required, units: this.units, query: this.nodes[last]?.terms ?? [], headerTokens, contextWindow, calibration }
  }
}

const WORDS = ['harbor', 'lantern', 'heron', 'rope', 'fog', 'bell', 'skiff', 'reed']
const turnSpec = fc.record({
  userTokens: fc.integer({ min: 5, max: 120 }),
  words: fc.uniqueArray(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
  snapshot: fc.constantFrom<'a' | 'b' | undefined>(undefined, undefined, undefined, 'a', 'b'),
  tools: fc.array(fc.record({ callTokens: fc.integer({ min: 5, max: 60 }), resultTokens: fc.integer({ min: 5, max: 300 }), importance: fc.constantFrom(0, 0, 0.5, 0.9) }), { maxLength: 2 }),
  replyTokens: fc.integer({ min: 20, max: 400 }),
})
const session = fc.array(turnSpec, { minLength: 1, maxLength: 40 })
const windows = fc.integer({ min: 4_000, max: 40_000 })

function build(turns: readonly TurnSpec[]): Surface {
  const surface = new Surface()
  for (const turn of turns) surface.add(turn)
  return surface
}

function newestSnapshots(nodes: readonly PolicyNode[]): number[] {
  const seen = new Map<string, number>()
  for (const node of nodes) if (node.standing !== undefined) seen.set(node.standing, node.seq)
  return [...seen.values()]
}

/** Run a session request by request, carrying the state, and hand each consecutive pair to `check`. */
function grow(turns: readonly TurnSpec[], contextWindow: number, check: (before: PolicySelection, after: PolicySelection, input: PolicyInput) => void): void {
  const surface = new Surface()
  let previous: PolicySelection | undefined
  for (const turn of turns) {
    surface.add(turn)
    const input = surface.input(contextWindow)
    const selection = selectContext(input, config, previous?.state)
    if (previous !== undefined) check(previous, selection, input)
    previous = selection
  }
}

describe('selectContext', () => {
  it('sends everything while the session fits the recent budget', () => {
    const surface = build([
      { userTokens: 10, words: ['harbor'], snapshot: 'a', tools: [], replyTokens: 40 },
      { userTokens: 10, words: ['fog'], snapshot: undefined, tools: [{ callTokens: 10, resultTokens: 20, importance: 0 }], replyTokens: 40 },
    ])
    const selection = selectContext(surface.input(10_000), config)
    expect(selection.include).toEqual(surface.nodes.map(node => node.seq))
    expect(selection.tokens).toBe(200 + surface.nodes.reduce((sum, node) => sum + node.tokens, 0))
  })

  it('forgets old turns, keeps node 0 and the newest snapshot, and retrieves the old node the user asks about', () => {
    const surface = new Surface()
    const [first] = surface.add({ userTokens: 20, words: ['harbor'], snapshot: 'a', tools: [], replyTokens: 200 })
    const lantern = surface.add({ userTokens: 20, words: ['lantern', 'skiff'], snapshot: undefined, tools: [], replyTokens: 200 })[0] as number
    for (let i = 0; i < 12; i++) surface.add({ userTokens: 20, words: ['rope'], snapshot: i === 5 ? 'a' : undefined, tools: [], replyTokens: 200 })
    surface.add({ userTokens: 20, words: ['lantern'], snapshot: undefined, tools: [], replyTokens: 200 })
    const input = { ...surface.input(10_000), requiredSeqs: [surface.nodes.at(-1)!.seq] }
    const { include, budget } = selectContext({ ...input, query: ['lantern'] }, config)
    expect(include.length).toBeLessThan(surface.nodes.length)
    expect(include).toContain(first)
    expect(include).toContain(lantern)
    expect(include).toEqual(expect.arrayContaining(newestSnapshots(surface.nodes)))
    expect(include.at(-1)).toBe(surface.nodes.at(-1)!.seq)
    expect(budget).toEqual({ kernel: 500, recent: 2000, retrieved: 500, input: 9000 })
  })

  it('ranks by source credibility: the user\'s own line outranks an equally relevant, fresher reply when only one fits', () => {
    const surface = new Surface()
    surface.add({ userTokens: 20, words: ['harbor'], snapshot: undefined, tools: [], replyTokens: 20 })
    const said = surface.add({ userTokens: 480, words: ['lantern'], snapshot: undefined, tools: [], replyTokens: 20 })[0] as number
    const replied = surface.add({ userTokens: 20, words: ['rope', 'lantern'], snapshot: undefined, tools: [], replyTokens: 480 }).at(-1) as number
    for (let i = 0; i < 12; i++) surface.add({ userTokens: 20, words: ['rope'], snapshot: undefined, tools: [], replyTokens: 200 })
    surface.add({ userTokens: 20, words: ['lantern'], snapshot: undefined, tools: [], replyTokens: 200 })
    const input = { ...surface.input(10_000), requiredSeqs: [surface.nodes.at(-1)!.seq], query: ['lantern'] }
    const credible = selectContext(input, config).include
    expect(credible).toContain(said)
    expect(credible).not.toContain(replied)
    const blind = selectContext(input, { ...config, weights: { ...config.weights, credibility: 0 } }).include
    expect(blind).toContain(replied)
    expect(blind).not.toContain(said)
  })

  it('starts a new epoch when a compaction removed the boundary node', () => {
    const surface = build(Array.from({ length: 20 }, () => ({ userTokens: 30, words: ['fog'], snapshot: undefined, tools: [], replyTokens: 300 })))
    const first = selectContext(surface.input(8_000), config)
    expect(first.state.boundary).toBeGreaterThan(surface.nodes[0]!.seq)
    const compacted = surface.input(8_000)
    const nodes = compacted.nodes.filter(node => node.seq >= first.state.boundary + 1 || node.seq === surface.nodes[0]!.seq)
    const again = selectContext({ ...compacted, nodes }, config, first.state)
    expect(again.advanced).toBe(true)
    expect(again.include).toContain(nodes[0]!.seq)
  })

  it('includes node 0, the required seqs and the newest snapshot of each source, in surface order, unit-closed', () => {
    fc.assert(fc.property(session, windows, (turns, contextWindow) => {
      const surface = build(turns)
      const input = surface.input(contextWindow)
      const { include } = selectContext(input, config)
      const order = surface.nodes.map(node => node.seq)
      expect(include).toEqual(order.filter(seq => include.includes(seq)))
      expect(include).toEqual(expect.arrayContaining([order[0], ...input.requiredSeqs, ...newestSnapshots(surface.nodes)]))
      for (const seq of include) expect(include).toEqual(expect.arrayContaining([...surface.units.get(seq) ?? []]))
    }))
  })

  it('is deterministic', () => {
    fc.assert(fc.property(session, windows, (turns, contextWindow) => {
      const input = build(turns).input(contextWindow)
      const state = selectContext(input, config).state
      expect(selectContext(input, config, state)).toEqual(selectContext(structuredClone({ ...input, units: new Map(input.units) }), config, structuredClone(state)))
    }))
  })

  it('stays within the calibrated request cap whenever the pinned nodes and the current turn fit in it', () => {
    fc.assert(fc.property(session, windows, fc.double({ min: 1, max: 3, noNaN: true }), (turns, contextWindow, factor) => {
      const input = build(turns).input(contextWindow, 200, factor)
      const selection = selectContext(input, config)
      const lastTurn = input.nodes.findLastIndex(node => node.turnStart)
      const floor = input.headerTokens + input.nodes.reduce((sum, node, i) =>
        sum + (i === 0 || i >= lastTurn || node.standing !== undefined ? node.tokens : 0), 0)
      expect(selection.calibratedTokens).toBe(Math.ceil(selection.tokens * factor))
      if (floor * factor <= selection.budget.input) expect(selection.calibratedTokens).toBeLessThanOrEqual(selection.budget.input)
    }))
  })

  it('sends fewer estimated tokens as provider usage reports the estimate too low', () => {
    const surface = build(Array.from({ length: 40 }, (_, i) => ({ userTokens: 40, words: [WORDS[i % WORDS.length]!], snapshot: undefined, tools: [], replyTokens: 200 })))
    const plain = selectContext(surface.input(10_000), config)
    const calibrated = selectContext(surface.input(10_000, 200, 2), config)
    expect(calibrated.budget).toEqual(plain.budget)
    expect(calibrated.tokens).toBeLessThan(plain.tokens)
    expect(calibrated.calibratedTokens).toBeLessThanOrEqual(calibrated.budget.input)
  })

  it('sends every node from the boundary on, and the boundary sits on a turn start or node 0', () => {
    fc.assert(fc.property(session, windows, (turns, contextWindow) => {
      const input = build(turns).input(contextWindow)
      const { include, state } = selectContext(input, config)
      const at = input.nodes.findIndex(node => node.seq === state.boundary)
      expect(at === 0 || input.nodes[at]!.turnStart).toBe(true)
      expect(include).toEqual(expect.arrayContaining(input.nodes.slice(at).map(node => node.seq)))
      expect(state.kept).toEqual(include.filter(seq => seq < state.boundary))
    }))
  })

  it('extends the previous request exactly while the boundary stays (a stable prefix)', () => {
    fc.assert(fc.property(session, windows, (turns, contextWindow) => {
      grow(turns, contextWindow, (before, after) => {
        if (!after.advanced) expect(after.include.slice(0, before.include.length)).toEqual(before.include)
      })
    }))
  })

  it('moves the boundary forward only, by at least blockTokens unless it reaches the newest turn', () => {
    fc.assert(fc.property(session, windows, (turns, contextWindow) => {
      grow(turns, contextWindow, (before, after, input) => {
        const from = input.nodes.findIndex(node => node.seq === before.state.boundary)
        const to = input.nodes.findIndex(node => node.seq === after.state.boundary)
        expect(to).toBeGreaterThanOrEqual(from)
        if (to === from) return
        const pinned = new Set([input.nodes[0]!.seq, ...newestSnapshots(input.nodes), ...input.requiredSeqs])
        const freed = input.nodes.slice(from, to).reduce((sum, node) => sum + (pinned.has(node.seq) ? 0 : node.tokens), 0)
        const newest = input.nodes.findLastIndex(node => node.turnStart)
        expect(freed >= config.blockTokens || to === newest).toBe(true)
      })
    }))
  })
})

describe('policy config', () => {
  it('labels projections with the policy version and a hash of the whole config', () => {
    expect(policyRevision(config)).toMatch(/^agent-tavern\/policy@2#[0-9a-f]{12}$/)
    expect(policyRevision(structuredClone(config))).toBe(policyRevision(config))
    expect(policyRevision({ ...config, blockTokens: 301 })).not.toBe(policyRevision(config))
    expect(policyRevision({ ...config, weights: { ...config.weights, freshness: 2 } })).not.toBe(policyRevision(config))
  })

  it('fails loud on shares that overflow the window, bad weights, and a block larger than the recent budget', () => {
    const invalid = (patch: Partial<PolicyConfig>): () => void => () => assertPolicyConfig({ ...config, ...patch })
    expect(invalid({ shares: { kernel: 0.5, recent: 0.5, retrieved: 0.1, reply: 0.1 } })).toThrow(/shares sum to 1.2/)
    expect(invalid({ shares: { ...config.shares, recent: -0.1 } })).toThrow(/share "recent"/)
    expect(invalid({ blockTokens: 0 })).toThrow(/blockTokens is 0/)
    expect(invalid({ weights: { ...config.weights, relevance: Number.NaN } })).toThrow(/weight "relevance"/)
    expect(() => budgetFor(config, 1_000)).toThrow(AgentTavernError)
    expect(() => budgetFor(config, 1_000)).toThrow(/blockTokens 300 exceeds the recent budget 200 tokens \(recent share 0.2 of a 1000-token context window\); lower blockTokens to at most 200 or raise the recent share to at least 0.3/)
  })

  it('carries a previous state only while it matches the surface', () => {
    const surface = build([{ userTokens: 10, words: ['reed'], snapshot: undefined, tools: [], replyTokens: 10 }])
    const stale: PolicyState = { boundary: 99_999, kept: [] }
    expect(selectContext(surface.input(10_000), config, stale).advanced).toBe(true)
  })
})
