/**
 * P1: what the patch costs a loop that has no `agent/context` listener. The same scripted conversation runs on the
 * unmodified npm rc.8 set and on the patched set in lockstep, turn by turn, and the per-turn times are compared.
 * @module bench/p1-overhead
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { BootedLoop, DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, patchedDsh, stockDsh } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { collectGarbage, median, significant } from './stats.ts'

/** One session length and configuration. */
interface Scenario {
  readonly turns: number
  readonly invariants: boolean
  readonly repetitions: number
}

interface Side {
  readonly kind: DshModules['kind']
  readonly loop: BootedLoop
  readonly agent: Agent
  ms: number
}

const TARGET = 1.02

async function side(dsh: DshModules, invariants: boolean): Promise<Side> {
  const loop = await bootLoop(dsh, { invariants, fallback: conversationReply() })
  return { kind: dsh.kind, loop, agent: loop.create(`p1-${dsh.kind}`), ms: 0 }
}

/**
 * One repetition: both loops run the conversation in lockstep, the side that goes first alternating every turn, so
 * machine noise falls on both alike.
 * @returns mean milliseconds per turn of each side, boot excluded.
 */
async function lockstep(stock: DshModules, patched: DshModules, scenario: Scenario): Promise<Record<DshModules['kind'], number>> {
  const sides = [await side(stock, scenario.invariants), await side(patched, scenario.invariants)]
  collectGarbage()
  for (let turn = 1; turn <= scenario.turns; turn++) {
    for (const s of turn % 2 === 0 ? sides : [...sides].reverse()) {
      const start = performance.now()
      await s.loop.say(s.agent, conversationTurn(turn))
      s.ms += performance.now() - start
    }
  }
  for (const s of sides) {
    if (s.loop.errors.length > 0) throw new Error(`P1 ${s.kind} loop failed: ${String(s.loop.errors[0]?.error)}`)
    await (s.loop.ctx as unknown as { fiber: { dispose(): Promise<unknown> } }).fiber.dispose()
  }
  const [s, p] = sides as [Side, Side]
  return { stock: s.ms / scenario.turns, patched: p.ms / scenario.turns }
}

/**
 * @param quick - fewer repetitions and turns, for a smoke run.
 * @param log - progress sink.
 * @returns the P1 section.
 */
export async function benchOverhead(quick: boolean, log: (line: string) => void): Promise<Section> {
  const [stock, patched] = [await stockDsh(), await patchedDsh()]
  const scenarios: Scenario[] = quick
    ? [{ turns: 30, invariants: false, repetitions: 3 }]
    : [
        { turns: 50, invariants: false, repetitions: 15 },
        { turns: 400, invariants: false, repetitions: 5 },
        { turns: 50, invariants: true, repetitions: 9 },
      ]
  await lockstep(stock, patched, { turns: 30, invariants: true, repetitions: 1 })
  const rows: string[][] = []
  const medians: number[] = []
  for (const scenario of scenarios) {
    const runs: Record<DshModules['kind'], number>[] = []
    for (let rep = 0; rep < scenario.repetitions; rep++) {
      runs.push(await lockstep(stock, patched, scenario))
      log(`P1 ${scenario.turns} turns${scenario.invariants ? ' + invariants' : ''}: repetition ${rep + 1}/${scenario.repetitions}`)
    }
    const ratios = runs.map(run => run.patched / run.stock)
    medians.push(median(ratios))
    rows.push([
      `${scenario.turns}`,
      scenario.invariants ? 'on' : 'off',
      `${scenario.repetitions}`,
      significant(median(runs.map(run => run.stock))),
      significant(median(runs.map(run => run.patched))),
      significant(Math.min(...ratios)),
      significant(median(ratios)),
    ])
  }
  const worst = Math.max(...medians)
  return {
    id: 'P1',
    title: 'No-listener overhead',
    method: 'The same scripted conversation (every third turn calls the `echo` tool) on two real AgentLoops booted by '
      + '`@dsh-seam/loop-testkit`, one from the unmodified npm rc.8 set (`stockDsh()`), one from the patched set '
      + '(`patchedDsh()`), with no `agent/context` listener. The two run in lockstep, turn by turn, the first to go '
      + 'alternating; a repetition\'s ratio is patched/stock mean time per turn (boot excluded). "Invariants on" mounts '
      + 'DSH\'s invariant registry with the session and agent-loop companions, as DSH\'s own tests do.',
    target: `median patched/stock per-turn time ≤ ${TARGET}`,
    verdict: verdict(worst <= TARGET, `worst median ratio ${significant(worst)}`),
    table: {
      columns: ['turns', 'invariants', 'repetitions', 'stock ms/turn (median)', 'patched ms/turn (median)', 'ratio min', 'ratio median'],
      rows,
    },
    notes: [
      'Without a listener for the agent the patched step looks `agent/context` up through cordis\' `events.dispatch`, '
        + 'finds none, builds no offer and returns `session.deriveMessages()` (P1-src times that path alone). With invariants on, the '
        + 'patched request invariant rebuilds the request with `requestMessagesFromLog` where stock calls `deriveMessages()`. '
        + 'Ratios below 1 are noise.',
    ],
  }
}
