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
  let sent = { runs: 0, nodes: 0 }
  loop.ctx.on('session/event', (session: Session, event: SessionEvent) => {
    if (event.type === 'step/start' || event.type === 'user/message') {
      marks.set(session, performance.now())
      projected.delete(session)
    } else if (event.type === 'request/projection') {
      projected.set(session, performance.now())
      if (session === managed.session) sent = { runs: event.data.include.length, nodes: event.data.includedNodes }
    }
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
  const keptAt: number[] = []
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
    keptAt.push(kept)
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
  const keptGrowth = `${((keptAt.at(-1) ?? 0) / (keptAt[0] ?? 1)).toFixed(1)}×`
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
    notes: [
      `${met ? 'Met' : 'Not met'}. A steady step reads what it sends, not the surface: the listener keeps its view of the offer `
        + 'as the surface grows (descriptions, tool units, positions by seq, the newest node of each standing source; '
        + 'rebuilt after a replace), and the policy sums the recent turns from the tail, so the pinned set, the lookups '
        + 'and the include cost the pinned and chosen nodes. Two passes still read every offered seq: the host\'s offer '
        + `(the keep-last listener's step grows ${keptGrowth} too) and the listener's check that the rest of the chain `
        + 'kept every node in order (one integer comparison per node). The usage calibration replays each request once, '
        + 'as the log grows, at the cost of what it sent; the retrieval rank reads the nodes before the boundary only '
        + 'when the boundary advances (the steps left out of the steady column).',
      ...met ? [] : [
        `What remains is a per-step cost set by what a request sends (steady growth ${growth.toFixed(2)}×${growth <= TARGET_GROWTH ? ', within the target' : ''}): at `
          + `${sizes.at(-1)?.toLocaleString('en')} turns a managed request sends ${sent.nodes} nodes in ${sent.runs} runs, `
          + 'which the host normalizes and appends as its `request/projection` (DSH validates and snapshots every run), '
          + 'the calibration checks again when it replays the request, and the listener describes and selects; the '
          + 'keep-last step sends one run. Those costs scale with the machine\'s speed and load, not with the surface.',
      ],
    ],
  }
}
