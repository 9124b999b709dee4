/**
 * An `agent/context` policy that keeps the newest whole turns whose messages fit a token budget, priced with DSH's
 * token meter (`ctx.tokenMeter.estimateMessage`), the turn of each offered node read from the log with
 * `TurnIndex` of `@dsh-seam/agent-context`. The open turn is always kept, whatever it costs; an older turn goes in
 * whole or not at all, so its tool-call units stay whole and the request opens with that turn's user message. The
 * host still adds what it always sends (runtime-context snapshots, the continuing tool unit). A policy module for
 * `dsh-seam simulate --policy` and for a real loop:
 * `agent.ctx.on('agent/context', createListener({ agent, meter: ctx.tokenMeter }))`.
 * @module @dsh-seam/context-policies/token-budget
 */

import type { ContextSelection } from '@deepseek-ai/dsh-agent'
import { sessionEventAt, TurnIndex } from '@dsh-seam/agent-context'
import type { PolicyHost, PolicyListener } from '@dsh-seam/cli'

/** Tokens the earlier turns may take, by DSH's estimate, beside the open turn. */
export const BUDGET_TOKENS = 4_000

/** The policy's name, also its revision label. */
export const name = `token-budget-${BUDGET_TOKENS}`

/**
 * @param host - the agent (its log gives each node's turn) and DSH's token meter.
 * @param budget - tokens the earlier turns may take.
 * @returns the listener: it selects from the offered nodes and does not call `next()`.
 */
export function createListener({ agent, meter }: PolicyHost, budget = BUDGET_TOKENS): PolicyListener {
  const turns = new TurnIndex()
  const revision = budget === BUDGET_TOKENS ? name : `token-budget-${budget}`
  return ({ nodes, turn }): Promise<ContextSelection> => {
    turns.follow(agent.session.seq, sessionEventAt(agent.session))
    const cost = new Map<number, number>()
    for (const node of nodes) {
      const of = turns.turnOf(node.seq)
      cost.set(of, (cost.get(of) ?? 0) + meter.estimateMessage(node.message))
    }
    let from = turn
    let spent = 0
    for (const earlier of [...cost.keys()].filter(of => of < turn).sort((a, b) => b - a)) {
      spent += cost.get(earlier) as number
      if (spent > budget) break
      from = earlier
    }
    return Promise.resolve({ include: nodes.filter(node => turns.turnOf(node.seq) >= from).map(node => node.seq), revision })
  }
}
