/**
 * P6: the host's cost per step when a keep-last-N listener selects, at 1,000 and 10,000 surface nodes.
 * @module bench/p6-keep-last
 */

import type { Agent, AgentEventDispatch } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh } from '@dsh-context/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { collectGarbage, median, significant } from './stats.ts'

const TARGET_MS_AT_10K = 0.2
const KEEP = 24
/** The compiled host, loaded by package name: the bench project builds against no host sources. */
const HOST_PACKAGE = '@dsh-context/agent-loop-patch'

type Host = (agent: Agent, dispatch: AgentEventDispatch, request: { turn: number; step: number; system: string; tools: readonly never[]; signal: AbortSignal }) => Promise<Message[]>

/**
 * @param quick - one smaller size and fewer calls, for a smoke run.
 * @param log - progress sink.
 * @returns the P6 section.
 */
export async function benchKeepLast(quick: boolean, log: (line: string) => void): Promise<Section> {
  const { projectRequestMessages } = await import(HOST_PACKAGE) as { projectRequestMessages: Host }
  const dsh = await patchedDsh()
  const loop = await bootLoop(dsh, { invariants: false, fallback: conversationReply() })
  const agent = loop.create('p6')
  agent.ctx.on('agent/context', keepLastNodes(KEEP))
  const dispatch = dsh.agent.agentEvents(loop.ctx, agent)
  const sizes = quick ? [1_000] : [1_000, 10_000]
  const rows: string[][] = []
  let atLargest = 0
  let turn = 0
  for (const nodes of sizes) {
    while (agent.session.surface.nodes.length < nodes) await loop.say(agent, conversationTurn(++turn))
    if (loop.errors.length > 0) throw new Error(`P6 recording failed: ${String(loop.errors[0]?.error)}`)
    const request = { turn, step: 1, system: '', tools: [] as const, signal: new AbortController().signal }
    const sent = await projectRequestMessages(agent, dispatch, request)
    const samples: number[] = []
    const calls = quick ? 100 : 400
    for (let b = 0; b < (quick ? 5 : 15); b++) {
      collectGarbage()
      const start = performance.now()
      for (let i = 0; i < calls; i++) await projectRequestMessages(agent, dispatch, request)
      samples.push((performance.now() - start) / calls)
    }
    const ms = median(samples)
    atLargest = ms
    rows.push([`${agent.session.surface.nodes.length}`, `${agent.session.events.length}`, `${sent.length}`, significant(ms * 1000)])
    log(`P6 ${nodes} nodes: ${significant(ms * 1000)} µs per step`)
  }
  await (loop.ctx as unknown as { fiber: { dispose(): Promise<unknown> } }).fiber.dispose()
  return {
    id: 'P6',
    title: 'Host cost per step with a keep-last-N listener',
    method: `A real patched AgentLoop session grows by the scripted conversation (every third turn calls \`echo\`) with a `
      + `\`keepLastNodes(${KEEP})\` \`agent/context\` listener, so every step takes the host's full path. At each size the `
      + 'host\'s step (`projectRequestMessages`: offer derived incrementally, waterfall with the listener, normalization, '
      + 'run encoding, the `request/projection` append, the sent messages) is called in batches on that session; median '
      + 'of the batch means. The listener\'s own work (`await next()`, a slice) is included.',
    target: `≤ ${TARGET_MS_AT_10K} ms per step at 10,000 surface nodes`,
    verdict: quick ? 'pending: --quick measures 1,000 nodes only' : verdict(atLargest <= TARGET_MS_AT_10K, `${significant(atLargest)} ms at 10,000 nodes`),
    table: { columns: ['surface nodes', 'log events', 'messages sent', 'host µs per step'], rows },
    notes: [
      'Between steps the host keeps the offered nodes per session and derives only the nodes appended since, so a step '
        + 'costs what it sends and what was appended, not the surface; the series\' host is generated from the same module.',
    ],
  }
}
