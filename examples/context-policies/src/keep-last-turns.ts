/**
 * An `agent/context` policy that keeps the last {@link KEEP_TURNS} user turns: every node from the newest turns' first
 * user message on. The host adds what it always sends (runtime-context snapshots, the continuing tool unit) and keeps
 * tool units whole. A policy module for `dsh-seam simulate --policy` and for a real loop:
 * `agent.ctx.on('agent/context', createListener({ agent, meter: ctx.tokenMeter }))`.
 * @module @dsh-seam/context-policies/keep-last-turns
 */

import type { ContextSelection } from '@deepseek-ai/dsh-agent'
import type { PolicyListener } from '@dsh-seam/cli'

/** Turns kept. */
export const KEEP_TURNS = 3

/** The policy's name, also its revision label. */
export const name = `keep-last-${KEEP_TURNS}-turns`

/**
 * @returns the listener: it selects from the offered nodes and does not call `next()`.
 */
export function createListener(): PolicyListener {
  return ({ nodes }): Promise<ContextSelection> => {
    let from = nodes.length
    for (let turns = 0; from > 0 && turns < KEEP_TURNS;) {
      from--
      const { message } = nodes[from] as (typeof nodes)[number]
      if (message.source.kind === 'user') turns++
    }
    return Promise.resolve({ include: nodes.slice(from).map(node => node.seq), revision: name })
  }
}
