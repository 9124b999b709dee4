/**
 * The token-budget example policy (`@dsh-seam/context-policies/token-budget`) on the real patched loop: each request
 * sends the open turn and the newest earlier turns whose messages fit the budget by DSH's token meter, whole turns
 * only, and the log rebuilds every request (DSH's request invariant runs on each).
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import { isAgentLoopRequest } from '@deepseek-ai/dsh-llm'
import { tokenBudget } from '@dsh-seam/context-policies'
import type { ScriptEntry } from '@dsh-seam/loop-testkit'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'

const BUDGET = 600
const TURNS = 14

/** Every other turn calls `echo` first; the answers are long enough that a few turns fill the budget. */
const reply: ScriptEntry = (request, index) => request.messages.at(-1)?.role === 'user' && index % 2 === 0
  ? toolCallReply([{ id: `call-${index}`, name: 'echo', args: { text: `note ${index}` } }])
  : textReply(`Reply ${index}: ${'the tide turns at the sandbar and the ferry waits for the last passenger. '.repeat(6)}`)

/** The turn a sent message belongs to: the newest "Turn N:" user text at or before it. */
function turnsOf(messages: readonly Message[]): number[] {
  let turn = 0
  return messages.map(message => {
    const text = message.role === 'user' ? message.content.map(block => block.type === 'text' ? block.text : '').join('') : ''
    turn = Number(/^Turn (\d+):/.exec(text)?.[1] ?? turn)
    return turn
  })
}

describe('token-budget policy on the real loop', () => {
  it('sends the open turn and the newest whole earlier turns within the budget, priced by DSH\'s token meter', async () => {
    const loop = await bootLoop(await patchedDsh(), { fallback: reply })
    const agent = loop.create('budget')
    agent.ctx.on('agent/context', tokenBudget.createListener({ agent, meter: loop.ctx.tokenMeter }, BUDGET))
    for (let turn = 1; turn <= TURNS; turn++) await loop.say(agent, `Turn ${turn}: what do you see on the water now?`)
    expect(loop.errors).toEqual([])

    const sent = loop.adapter.requests.filter(request => isAgentLoopRequest(request))
    // What each finished turn costs on the whole surface (no compaction here): the same at every later request.
    const surface = agent.session.deriveMessages()
    const cost = new Map<number, number>()
    turnsOf(surface).forEach((turn, i) => cost.set(turn, (cost.get(turn) ?? 0) + loop.ctx.tokenMeter.estimateMessage(surface[i] as Message)))
    let projected = 0
    for (const request of sent) {
      const turns = turnsOf(request.messages)
      const open = turns.at(-1) as number
      const kept = [...new Set(turns)]
      // Whole turns, newest first, ending with the open one: a contiguous run of turn numbers.
      expect(kept).toEqual(kept.map((_, i) => open - kept.length + 1 + i))
      const earlier = request.messages.filter((_, i) => (turns[i] as number) < open)
      const tokens = earlier.reduce((sum, message) => sum + loop.ctx.tokenMeter.estimateMessage(message), 0)
      expect(tokens).toBeLessThanOrEqual(BUDGET)
      const oldest = kept[0] as number
      if (oldest > 1) {
        projected++
        // The turn before the oldest kept one would not have fitted.
        expect(tokens + (cost.get(oldest - 1) as number)).toBeGreaterThan(BUDGET)
      }
    }
    expect(projected).toBeGreaterThan(TURNS / 2)
    const revisions = agent.session.events.filter(event => event.type === 'request/projection').map(event => (event.data as { revision: string }).revision)
    expect(revisions.length).toBe(projected)
    expect(new Set(revisions)).toEqual(new Set([`token-budget-${BUDGET}`]))
    await loop.ctx.fiber.dispose()
  })
})
