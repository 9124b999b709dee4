/**
 * P10: what one step costs as a session grows, with the log appended to between steps as in use. Three real loops
 * run the same scripted conversation in lockstep: the unmodified npm rc.8 set, the patched set with no
 * `agent/context` listener, and the patched set with a keep-the-last-6-nodes listener. Each step's window is timed
 * from the end of the `agent/pre-step` waterfall (the step's user messages are then appended) to the dispatch of
 * `agent/request` (the request messages are chosen): where the host runs. Measured at 10,000 and at 100,000 log events.
 * @module bench/p10-step-window
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { BootedLoop, DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, patchedDsh, stockDsh } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { collectGarbage, median, significant } from './stats.ts'

const NO_LISTENER_TARGET = 1.1
const GROWTH_TARGET = 1.5
const KEEP = 6

interface Side {
  readonly name: 'stock' | 'patched' | 'listener'
  readonly loop: BootedLoop
  readonly agent: Agent
  /** Window of the step in progress: when `agent/pre-step` ended, and every window measured so far. */
  started: number
  readonly windows: number[]
  /** The listener side's host part of each window: until the host appends the step's `request/projection`. */
  readonly host: number[]
}

async function side(dsh: DshModules, name: Side['name']): Promise<Side> {
  const loop = await bootLoop(dsh, { invariants: false, fallback: conversationReply() })
  const agent = loop.create(`p9-${name}`)
  const s: Side = { name, loop, agent, started: Number.NaN, windows: [], host: [] }
  agent.ctx.on('agent/pre-step', async (_payload, next) => {
    const decision = await next()
    s.started = performance.now()
    return decision
  }, { prepend: true })
  agent.ctx.on('agent/request', async (_payload, next) => {
    s.windows.push(performance.now() - s.started)
    return next()
  }, { prepend: true })
  if (name === 'listener') {
    agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-KEEP), revision: `keep-last-${KEEP}` }))
    agent.ctx.on('session/event', (session, event) => {
      if (session === agent.session && event.type === 'request/projection') s.host.push(performance.now() - s.started)
    })
  }
  return s
}

/**
 * Grow every side's log to `events` events, turn by turn in lockstep (the first to go alternating), then time
 * `steps` more requests on each.
 * @returns median microseconds per step window of each side.
 */
async function measureAt(sides: readonly Side[], turn: { next: number }, events: number, steps: number): Promise<Record<Side['name'] | 'host', number>> {
  const say = async (): Promise<void> => {
    const order = turn.next % 2 === 0 ? sides : [...sides].reverse()
    for (const s of order) await s.loop.say(s.agent, conversationTurn(turn.next))
    turn.next += 1
  }
  while (Math.min(...sides.map(s => s.agent.session.seq)) < events) await say()
  collectGarbage()
  const from = sides.map(s => s.windows.length)
  const listener = sides.find(s => s.name === 'listener') as Side
  const hostFrom = listener.host.length
  while (Math.min(...sides.map((s, i) => s.windows.length - (from[i] as number))) < steps) await say()
  for (const s of sides) if (s.loop.errors.length > 0) throw new Error(`P10 ${s.name} loop failed: ${String(s.loop.errors[0]?.error)}`)
  return {
    ...Object.fromEntries(sides.map((s, i) => [s.name, median(s.windows.slice(from[i])) * 1_000])) as Record<Side['name'], number>,
    host: median(listener.host.slice(hostFrom)) * 1_000,
  }
}

/**
 * @param quick - smaller sizes, for a smoke run.
 * @param log - progress sink.
 * @returns the P10 section.
 */
export async function benchStepWindow(quick: boolean, log: (line: string) => void): Promise<Section> {
  const [stock, patched] = [await stockDsh(), await patchedDsh()]
  const sizes = quick ? [2_000, 20_000] : [10_000, 100_000]
  const steps = quick ? 100 : 400
  const sides = [await side(stock, 'stock'), await side(patched, 'patched'), await side(patched, 'listener')]
  const turn = { next: 1 }
  const results: { events: number; us: Record<Side['name'] | 'host', number> }[] = []
  for (const events of sizes) {
    results.push({ events, us: await measureAt(sides, turn, events, steps) })
    log(`P10 ${events} events: measured`)
  }
  const [small, large] = results as [typeof results[number], typeof results[number]]
  const noListener = Math.max(...results.map(r => r.us.patched / r.us.stock))
  const growth = large.us.host / small.us.host
  const windowGrowth = large.us.listener / small.us.listener
  const nodes = sides.map(s => s.agent.session.surface.nodes.length)
  for (const s of sides) await (s.loop.ctx as unknown as { fiber: { dispose(): Promise<unknown> } }).fiber.dispose()
  return {
    id: 'P10',
    title: 'The step as the log grows, with appends between steps',
    method: 'Three real AgentLoops booted by `@dsh-seam/loop-testkit` (invariants off) run the same scripted conversation '
      + 'in lockstep, turn by turn, the first to go alternating: the unmodified npm rc.8 set, the patched set with no '
      + `\`agent/context\` listener, and the patched set with a keep-the-last-${KEEP}-nodes listener (\`(await next()).include.slice(-${KEEP})\`). `
      + 'Every turn appends to each log, so nothing a step reads is cached from the step before. A step\'s window runs '
      + 'from the end of the `agent/pre-step` waterfall to the dispatch of `agent/request` (the step\'s user messages '
      + 'appended, the request messages chosen: where the host runs). Each log is grown to the size in the table, then '
      + `the median window of the next ${steps} requests is taken; the same sessions grow from the first size to the second. `
      + 'For the listener side the host\'s part of the window is timed too: from the end of `agent/pre-step` to the host\'s '
      + 'append of the step\'s `request/projection` (the dispatch, the offer, the listener, normalization and '
      + '`agent/context-selected`; the rest of the window is DSH building the request).',
    target: `no listener: patched/stock window ≤ ${NO_LISTENER_TARGET} at each size; keep-last-${KEEP} listener: the host's cost per step at `
      + `${large.events.toLocaleString('en-US')} events ≤ ${GROWTH_TARGET}× its cost at ${small.events.toLocaleString('en-US')}`,
    verdict: verdict(noListener <= NO_LISTENER_TARGET && growth <= GROWTH_TARGET,
      `no-listener ratio ${significant(noListener)} (worst size), the host's growth with a listener ${significant(growth)}× (its whole window ${significant(windowGrowth)}×)`),
    table: {
      columns: ['log events', 'stock µs/step', 'patched, no listener µs/step', 'ratio', `patched, keep-last-${KEEP} µs/step`, `of which the host's part, µs/step`],
      rows: results.map(r => [
        r.events.toLocaleString('en-US'),
        significant(r.us.stock),
        significant(r.us.patched),
        significant(r.us.patched / r.us.stock),
        significant(r.us.listener),
        significant(r.us.host),
      ]),
    },
    notes: [
      `Surface nodes at the end: stock ${nodes[0]}, patched ${nodes[1]}, with the listener ${nodes[2]}.`,
      'With no listener in the agent\'s scope the patched step asks cordis which listeners `agent/context` and '
        + '`agent/context-selected` have (`ctx.events.dispatch`, once each) and returns `session.deriveMessages()`, as stock does. '
        + 'With a listener the host offers nodes from a surface fold it keeps in step with the log through `session/event` '
        + '(the log is read once, when following starts) and offers the fold\'s own node and seq lists, copying neither, so '
        + 'its part does not grow with the log; the listener\'s whole window stays below stock\'s at 100,000 events because '
        + 'DSH then builds a request of the few nodes it sends. Stock\'s window grows with the session: '
        + '`deriveMessages()` copies its message list every step, and an array past about 16,000 elements no longer fits '
        + 'V8\'s regular heap objects, so each such copy is a large-object allocation, and the garbage collector\'s work '
        + 'on three 100,000-event sessions in one heap lands in every side\'s windows.',
    ],
  }
}
