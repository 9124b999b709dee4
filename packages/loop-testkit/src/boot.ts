/**
 * Boot a real DSH AgentLoop offline: the same services DSH's own agent-loop testkit mounts, DSH's runtime
 * invariants, and a scripted adapter on the `fake` route.
 * @module @dsh-seam/loop-testkit/boot
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { UserMessage } from '@deepseek-ai/dsh-session'
import type { ScriptedAdapter, ScriptedAdapterOptions } from './adapter.ts'
import { scriptedAdapter } from './adapter.ts'
import type { DshModules } from './modules.ts'

/** How a loop is booted. */
export interface BootOptions extends ScriptedAdapterOptions {
  /** Mount DSH's invariant registry with the session and agent-loop companions (default true). */
  readonly invariants?: boolean
  /** System prompt persona. */
  readonly persona?: string
  /** Mount JSONL session persistence under this directory. */
  readonly persistRoot?: string
  /** With `persistRoot`: the JSONL backend's `compression` (default `'none'`). */
  readonly compression?: 'none' | 'zstd'
  /** Plugins mounted after the loop, e.g. a compaction engine with its config. */
  readonly plugins?: readonly [plugin: unknown, config?: unknown][]
}

/** A booted loop. */
export interface BootedLoop {
  readonly dsh: DshModules
  readonly ctx: Context
  readonly adapter: ScriptedAdapter
  /** Every `agent/error` payload, in order. */
  readonly errors: { agent: Agent; turn: number; step: number; error: unknown }[]
  /**
   * Create an agent on the scripted route.
   * @param id - its session id.
   * @returns the agent.
   */
  create(id: string): Agent
  /**
   * Send a user follow-up and wait until the agent is idle again.
   * @param agent - the agent.
   * @param text - the user text.
   */
  say(agent: Agent, text: string): Promise<void>
  /**
   * A user message in DSH's shape.
   * @param text - its text.
   * @returns the message.
   */
  user(text: string): UserMessage
}

/**
 * Boot a real loop from a DSH module set.
 * @param dsh - patched or stock modules.
 * @param options - invariants, persona, persistence, extra plugins and the adapter script.
 * @returns the booted loop.
 */
export async function bootLoop(dsh: DshModules, options: BootOptions = {}): Promise<BootedLoop> {
  const ctx = new dsh.cordis.Context()
  const host = ctx as unknown as { plugin(p: unknown, config?: unknown): PromiseLike<unknown> }
  const plugin = async (p: unknown, config?: unknown): Promise<void> => { await host.plugin(p, config) }
  if (options.invariants !== false) {
    await plugin(dsh.invariants.default, { enabled: true })
    await plugin(dsh.sessionInvariant)
    await plugin(dsh.agentLoopInvariant)
  }
  await plugin(dsh.llm.default)
  await plugin(dsh.session.default)
  if (options.persistRoot !== undefined) await plugin(dsh.persistenceJsonl.default, { root: options.persistRoot, compression: options.compression ?? 'none' })
  await plugin(dsh.systemPrompt.default, { persona: options.persona ?? 'You are a scripted test agent.' })
  await plugin(dsh.tools.default, {})
  await plugin(dsh.agent.default)
  await plugin(dsh.tokenMeter.default)
  await plugin(dsh.agentLoop.default, { agents: [] })
  for (const [p, config] of options.plugins ?? []) await plugin(p, config)
  ctx.tools.register(dsh.tools.defineContentToolFixture({
    name: 'echo',
    description: 'Echo text back.',
    parameters: { text: { type: 'string' } },
    execute: (args: Record<string, unknown>) => Promise.resolve([{ type: 'text' as const, text: `echo: ${String(args.text)}` }]),
  }))
  const adapter = scriptedAdapter(dsh, options)
  ctx.llm.registerAdapter(['fake'], adapter)
  const errors: BootedLoop['errors'] = []
  ctx.on('agent/error', payload => { errors.push(payload) })
  const user = (text: string): UserMessage =>
    dsh.llm.createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } })
  return {
    dsh,
    ctx,
    adapter,
    errors,
    create: id => ctx.agentLoop.create(dsh.session.SessionId(id), { provider: 'fake', model: 'fake-model' }),
    async say(agent, text) {
      agent.followup(user(text))
      await agent.whenIdle()
    },
    user,
  }
}
