/**
 * P7: the cost of AgentTavern's managed step (the host plus the selection policy, retrieval included) at 1,000 and
 * 5,000 turns, beside a keep-last-N listener on the same conversation, in one process.
 * @module bench/p7-tavern-step
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
import { AgentTavern, lastSelection, TAVERN_REFERENCE_HINT } from '@dsh-seam/agent-tavern'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { median, significant } from './stats.ts'

const TARGET_MS = 1
const TARGET_GROWTH = 2
const KEEP = 24
/** A window the default policy fits (its 2,000-token blocks need 33,334 tokens and up). */
const CONTEXT_WINDOW = 128_000

/** One timed step of the managed agent, and whether its forgetting boundary stayed put. */
interface Sample {
  readonly ms: number
  readonly steady: boolean
}

/**
 * @param quick - smaller sizes and fewer steps, for a smoke run.
 * @param log - progress sink.
 * @returns the P7 section.
 */
export async function benchTavernStep(quick: boolean, log: (line: string) => void): Promise<Section> {
  const loop = await bootLoop(await patchedDsh(), {
    invariants: false,
    contextWindow: CONTEXT_WINDOW,
    fallback: conversationReply(),
    // Pressure compaction off (`auto: false`): P7 times the host and the policy, not a compaction.
    plugins: [[ProjectionAwareCompactionEngine, { measure: 'projection', summary: 'reference', referenceHint: TAVERN_REFERENCE_HINT, auto: false }]],
  })
  const managed = loop.create('p7-managed')
  const keepLast = loop.create('p7-keep-last')
  await managed.ctx.plugin(AgentTavern, { character: { name: 'Mira', identity: 'The ferrywoman.' }, contextMode: 'agent-managed', anchorEvery: 0 } as never)
  keepLast.ctx.on('agent/context', keepLastNodes(KEEP))

  const marks = new Map<Session, number>()
  const times = new Map<Agent, number[]>([[managed, []], [keepLast, []]])
  const samples: Sample[] = []
  let measuring = false
  let boundary: number | undefined
  const projected = new Map<Session, number>()
  loop.ctx.on('session/event', (session: Session, event: SessionEvent) => {
    if (event.type === 'step/start' || event.type === 'user/message') {
      marks.set(session, performance.now())
      projected.delete(session)
    } else if (event.type === 'request/projection') projected.set(session, performance.now())
  })
  loop.ctx.on('agent/request', ({ agent }, next) => {
    const mark = marks.get(agent.session)
    const ms = mark === undefined ? undefined : (projected.get(agent.session) ?? performance.now()) - mark
    if (measuring && ms !== undefined) times.get(agent)?.push(ms)
    if (agent === managed) {
      const now = lastSelection(managed)?.state.boundary
      if (measuring && ms !== undefined) samples.push({ ms, steady: now === boundary })
      boundary = now
    }
    return next()
  })

  const sizes = quick ? [200, 1_000] : [1_000, 5_000]
  const rows: string[][] = []
  const steadyAt: number[] = []
  let managedAtLargest = 0
  let turn = 0
  for (const turns of sizes) {
    while (turn < turns) {
      turn++
      for (const agent of [managed, keepLast]) await loop.say(agent, conversationTurn(turn))
    }
    for (const list of times.values()) list.length = 0
    samples.length = 0
    measuring = true
    const timed = quick ? 30 : 90
    for (let i = 0; i < timed; i++) {
      turn++
      for (const agent of i % 2 === 0 ? [managed, keepLast] : [keepLast, managed]) await loop.say(agent, conversationTurn(turn))
    }
    measuring = false
    if (loop.errors.length > 0) throw new Error(`P7 failed: ${String(loop.errors[0]?.error)}`)
    const [tavern, kept] = [median(times.get(managed) ?? []), median(times.get(keepLast) ?? [])]
    const steady = samples.filter(sample => sample.steady)
    steadyAt.push(median(steady.map(sample => sample.ms)))
    managedAtLargest = tavern
    rows.push([
      `${turns}`,
      `${managed.session.surface.nodes.length}`,
      `${samples.length}`,
      significant(kept),
      significant(tavern),
      significant(steadyAt.at(-1) ?? 0),
      `${samples.length - steady.length}`,
    ])
    log(`P7 ${turns} turns: managed ${significant(tavern)} ms/step, keep-last ${significant(kept)} ms/step`)
  }
  await (loop.ctx as unknown as { fiber: { dispose(): Promise<unknown> } }).fiber.dispose()
  const growth = (steadyAt.at(-1) ?? 0) / (steadyAt[0] ?? 1)
  const met = managedAtLargest <= TARGET_MS && growth <= TARGET_GROWTH
  return {
    id: 'P7',
    title: 'AgentTavern\'s managed step: the policy\'s own cost',
    method: 'Two agents of one real patched AgentLoop grow in lockstep by the scripted conversation (every third turn '
      + 'calls `echo`): one runs AgentTavern in `agent-managed` mode with the default policy on a '
      + `${CONTEXT_WINDOW.toLocaleString('en')}-token window (reminders off, projection-aware compaction mounted with `
      + `pressure compaction off), one a \`keepLastNodes(${KEEP})\` listener. At each size a run of further turns (the `
      + 'order alternating) times, for every step, the span from the step\'s last input event (`step/start` or a '
      + '`user/message`) to its `request/projection` append (to `agent/request` for a step that sends every node): '
      + 'the host\'s offer, the waterfall with the listener (for AgentTavern: pricing, calibration, the retrieval rank '
      + 'and the selection), normalization and the append. DSH\'s own request build after it (message freezing, the '
      + 'header fold) is left out. "Steady" steps are those whose forgetting boundary did not advance.',
    target: `managed ≤ ${TARGET_MS} ms per step at ${sizes.at(-1)?.toLocaleString('en')} turns; steady steps grow ≤ ${TARGET_GROWTH}× per 5× turns`,
    verdict: verdict(met, `${significant(managedAtLargest)} ms per step at ${sizes.at(-1)?.toLocaleString('en')} turns; steady growth ${growth.toFixed(2)}×`),
    table: {
      columns: ['turns', 'surface nodes', 'steps timed', `keep-last-${KEEP} ms/step (median)`, 'managed ms/step (median)', 'managed steady ms/step (median)', 'boundary advances'],
      rows,
    },
  }
}
