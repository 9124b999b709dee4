/**
 * P6: the host's cost per step when a keep-last-N listener selects, at 1,000 and 10,000 surface nodes.
 * @module bench/p6-keep-last
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { median, significant } from './stats.ts'

const TARGET_MS_AT_10K = 0.2
const KEEP = 24

/**
 * Per step, the time from the step's last input event (`step/start` or a `user/message`) to its `agent/request`
 * dispatch: the host's step (with a listener) or `deriveMessages()` (without), then the request header fold.
 */
function stepTimer(loop: BootedLoop): { samples: Map<Agent, number[]>; measuring: { on: boolean } } {
  const marks = new Map<Session, number>()
  const samples = new Map<Agent, number[]>()
  const measuring = { on: false }
  loop.ctx.on('session/event', (session: Session, event: SessionEvent) => {
    if (event.type === 'step/start' || event.type === 'user/message') marks.set(session, performance.now())
  })
  loop.ctx.on('agent/request', ({ agent }, next) => {
    const mark = marks.get(agent.session)
    if (measuring.on && mark !== undefined) samples.get(agent)?.push(performance.now() - mark)
    return next()
  })
  return { samples, measuring }
}

/**
 * @param quick - one smaller size and fewer steps, for a smoke run.
 * @param log - progress sink.
 * @returns the P6 section.
 */
export async function benchKeepLast(quick: boolean, log: (line: string) => void): Promise<Section> {
  const loop = await bootLoop(await patchedDsh(), { invariants: false, fallback: conversationReply() })
  const selecting = loop.create('p6-keep-last')
  const plain = loop.create('p6-no-listener')
  selecting.ctx.on('agent/context', keepLastNodes(KEEP))
  const { samples, measuring } = stepTimer(loop)
  samples.set(selecting, []).set(plain, [])
  const sizes = quick ? [1_000] : [1_000, 10_000]
  const rows: string[][] = []
  let costAtLargest = 0
  let turn = 0
  for (const nodes of sizes) {
    while (selecting.session.surface.nodes.length < nodes) {
      turn++
      for (const agent of [selecting, plain]) await loop.say(agent, conversationTurn(turn))
    }
    for (const list of samples.values()) list.length = 0
    measuring.on = true
    for (let i = 0; i < (quick ? 30 : 90); i++) {
      turn++
      for (const agent of i % 2 === 0 ? [selecting, plain] : [plain, selecting]) await loop.say(agent, conversationTurn(turn))
    }
    measuring.on = false
    if (loop.errors.length > 0) throw new Error(`P6 failed: ${String(loop.errors[0]?.error)}`)
    const [withListener, without] = [median(samples.get(selecting) ?? []), median(samples.get(plain) ?? [])]
    costAtLargest = withListener - without
    const { session } = selecting
    rows.push([
      `${session.surface.nodes.length}`,
      `${session.events.length}`,
      `${(samples.get(selecting) ?? []).length}`,
      significant(without),
      significant(withListener),
      significant(withListener - without),
    ])
    log(`P6 ${nodes} nodes: ${significant(withListener)} ms with the listener, ${significant(without)} ms without`)
  }
  await (loop.ctx as unknown as { fiber: { dispose(): Promise<unknown> } }).fiber.dispose()
  return {
    id: 'P6',
    title: 'Host cost per step with a keep-last-N listener',
    method: 'Two agents of one real patched AgentLoop grow in lockstep by the scripted conversation (every third turn '
      + `calls \`echo\`), one with a \`keepLastNodes(${KEEP})\` \`agent/context\` listener, one with none. At each size `
      + 'a run of further turns (the order alternating) times, for every step, the span from the step\'s last input event '
      + '(`step/start` or `user/message`) to its `agent/request` dispatch: the host\'s step (offer, waterfall with the '
      + 'listener, normalization, the `request/projection` append) or `deriveMessages()`, then the request header fold. '
      + 'Host cost = median with the listener − median without.',
    target: `host cost ≤ ${TARGET_MS_AT_10K} ms per step at 10,000 surface nodes`,
    verdict: quick ? 'pending: --quick measures 1,000 nodes only' : verdict(costAtLargest <= TARGET_MS_AT_10K, `${significant(costAtLargest)} ms at 10,000 nodes`),
    table: {
      columns: ['surface nodes', 'log events', 'steps timed', 'without listener ms/step (median)', `keep-last-${KEEP} ms/step (median)`, 'host cost ms/step'],
      rows,
    },
  }
}
