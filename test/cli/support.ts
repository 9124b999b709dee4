/** Running `dsh-seam` as a child process, and editing a real persisted log into a broken one. */

import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { deriveEventMessage, foldSurface } from '@deepseek-ai/dsh-session'
import { CLI_BIN } from '@dsh-seam/cli'
import { AgentTavern } from '@dsh-seam/agent-tavern'
import { DEMO_CONTEXT_WINDOW, demoCompaction, roleplayReply, story, tavernConfig } from '@dsh-seam/agent-tavern-demo'
import type { ContextListener } from '@dsh-seam/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import type { LastTurnsRun } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { runLastTurns } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'

/** What one `dsh-seam` run printed and returned. */
export interface CliRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Run the built `dsh-seam` executable under the current Node.
 * @param args - its arguments.
 * @returns exit status and output.
 */
export function runCli(...args: string[]): CliRun {
  const { status, stdout, stderr } = spawnSync(process.execPath, [CLI_BIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 })
  return { status, stdout, stderr }
}

/**
 * Rewrite the JSONL line holding the event of `seq` (a line holding a single event, not a packed chunk row).
 * @param from - the source log.
 * @param to - the file to write.
 * @param seq - the event to change.
 * @param edit - returns the replacement event.
 * @returns the 1-based line rewritten.
 */
export function rewriteEvent(from: string, to: string, seq: number, edit: (event: Record<string, unknown>) => unknown): number {
  let line = 0
  const lines = readFileSync(from, 'utf8').split('\n').map((text, i) => {
    if (i === 0 || text === '') return text
    const record = JSON.parse(text) as Record<string, unknown>
    if (record['seq'] !== seq || typeof record['type'] !== 'string' || record['type'].endsWith('-chunks')) return text
    line = i + 1
    return JSON.stringify(edit(record))
  })
  if (line === 0) throw new Error(`no single-event line with seq ${seq} in ${from}`)
  writeFileSync(to, lines.join('\n'))
  return line
}

/**
 * The message-bearing surface seqs before event `seq`, in surface order, folded by DSH.
 * @param events - a log.
 * @param seq - the position.
 * @returns the seqs.
 */
export function surfaceBefore(events: readonly SessionEvent[], seq: number): number[] {
  return foldSurface(events.slice(0, seq)).nodes.filter(node => deriveEventMessage(events[node] as SessionEvent) !== null)
}

/**
 * The surface seqs a projection's `[first, last]` runs select.
 * @param surface - message-bearing surface seqs in surface order.
 * @param include - the runs.
 * @returns the selected seqs in surface order.
 */
export function selected(surface: readonly number[], include: readonly (readonly [number, number])[]): number[] {
  return include.flatMap(([first, last]) => surface.slice(surface.indexOf(first), surface.indexOf(last) + 1))
}

/**
 * Persist a session where projection-aware compaction replaces the surface inside projected steps (the compaction
 * package's "last 3 turns exceed" scenario: 24 turns, a tool call every 5, two long replies every 12 turns).
 * @param persistRoot - where the JSONL log goes.
 * @returns the run, its log flushed.
 */
export async function compactedSession(persistRoot: string): Promise<LastTurnsRun> {
  const run = await runLastTurns({
    dsh: await patchedDsh(),
    engine: { kind: 'projection-aware', config: { thresholdRatio: 0.8 } },
    turns: 24,
    keepTurns: 3,
    replyChars: turn => (turn % 12 === 8 || turn % 12 === 9 ? 3000 : 400),
    toolEvery: 5,
    persistRoot,
  })
  await run.loop.ctx.sessions.flush(run.agent.session)
  return run
}

/**
 * Persist the AgentTavern demo's English story in `agent-managed` mode as the demo runs it (its config, window and
 * compaction engine) on a real patched loop.
 * @param persistRoot - where the JSONL log goes.
 * @param turns - the story's length.
 * @returns the log's path, the script, and the loop's `agent/error` reports.
 */
export async function managedDemoSession(persistRoot: string, turns: number): Promise<{ path: string; script: ReturnType<typeof story>; errors: readonly unknown[] }> {
  const loop = await bootLoop(await patchedDsh(), {
    persistRoot,
    contextWindow: DEMO_CONTEXT_WINDOW,
    fallback: roleplayReply,
    plugins: [demoCompaction('agent-managed')],
  })
  const agent = loop.create('tavern-managed')
  await agent.ctx.plugin(AgentTavern, { ...tavernConfig('en'), contextMode: 'agent-managed' } as never)
  const script = story({ turns })
  for (const turn of script) await loop.say(agent, turn.text)
  await loop.ctx.sessions.flush(agent.session)
  return { path: sessionLogPath(loop, agent), script, errors: loop.errors }
}

/**
 * Persist a conversation of the loop-testkit's turns (every third calls `echo`) on a real patched loop.
 * @param persistRoot - where the JSONL log goes.
 * @param id - the session.
 * @param turns - how many user turns.
 * @param options - an `agent/context` listener, and the model's context window (the testkit's default otherwise).
 * @returns the log's path, flushed.
 */
export async function conversationLog(persistRoot: string, id: string, turns: number, options: { listener?: ContextListener; contextWindow?: number } = {}): Promise<string> {
  const loop = await bootLoop(await patchedDsh(), { persistRoot, fallback: conversationReply(), ...options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow } })
  const agent = loop.create(id)
  if (options.listener !== undefined) agent.ctx.on('agent/context', options.listener)
  for (let turn = 1; turn <= turns; turn++) await loop.say(agent, conversationTurn(turn))
  await loop.ctx.sessions.flush(agent.session)
  if (loop.errors.length > 0) throw new Error(`the conversation ${id} failed: ${String(loop.errors[0]?.error)}`)
  return sessionLogPath(loop, agent)
}
