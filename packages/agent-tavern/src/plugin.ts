/**
 * The AgentTavern cordis plugin. Mounted on one agent's context (`agent.ctx.plugin(AgentTavern, config)`, or as a
 * row of an agent preset), it checks its policy against the route's context window, then registers, in that agent's
 * scope only: the character as the persona section, the kernel contract section, the scene, facts and triggered lore
 * as runtime-context snapshots, the tools, the opening and anchor reminders, and, while the session's mode is
 * `agent-managed`, the `agent/context` listener.
 * @module @dsh-seam/agent-tavern/plugin
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { hasAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import { compactionSummary, offerReferenceHint } from '@dsh-seam/compaction-effective-projection'
import { PERSONA_ORDER, PERSONA_SECTION } from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-token-meter'
import { registerReminders } from './anchor.ts'
import { assertModeAvailable } from './capabilities.ts'
import type { Config as TavernConfig } from './config.ts'
import { Config as ConfigSchema, resolveConfig, TAVERN_REFERENCE_HINT } from './config.ts'
import { AgentTavernError } from './errors.ts'
import { currentRoute, logOf } from './host-log.ts'
import { managedProjector } from './listener.ts'
import type { ManagedProjector } from './listener.ts'
import { loreContext, triggeredLore } from './lore.ts'
import { activeMemories, currentScene } from './memory.ts'
import type { ContextMode, ModeRefusal } from './mode.ts'
import { assertContextMode, CONTEXT_MODE_EVENT, lastEndedTurn, recordedMode } from './mode.ts'
import { budgetFor } from './policy.ts'
import { tavernTools } from './tools.ts'

/** Plugin name. */
export const name = 'agent-tavern'

/** Services the plugin uses. */
export const inject = ['systemPrompt', 'tools', 'tokenMeter', 'llm']

/** Config schema. */
export const Config = ConfigSchema

/** Section and context names AgentTavern registers. */
const PROMPT_NAMES = {
  kernel: 'agent-tavern:kernel',
  scene: 'agent-tavern:scene',
  facts: 'agent-tavern:facts',
  lore: 'agent-tavern:lore',
} as const

/** Prompt order of the kernel section: right after the persona. */
const KERNEL_ORDER = 10

/** One agent's mode: the log's newest mode event, entered and left through {@link ModeController.set}. */
class ModeController {
  mode: ContextMode = 'dsh-native'
  /** Why the mode the session asked for at mount was refused, when it was. */
  refused: ModeRefusal | undefined
  private leave: (() => void) | undefined

  constructor(
    private readonly ctx: Context,
    private readonly agent: Agent,
    readonly projector: ManagedProjector,
    private readonly check: (mode: ContextMode) => Promise<void>,
  ) {}

  /**
   * Enter the logged mode (`fresh` for a session with no turns and no recorded mode). A mode the host cannot run is
   * refused: the session runs `dsh-native`, the refusal is warned, kept on {@link refused} and, on a build that can
   * append ignorable events (the seam's dsh-session), logged with the switch.
   */
  async start(fresh: ContextMode): Promise<void> {
    const { session } = this.agent
    const recorded = recordedMode(logOf(session))
    const started = logOf(session).some(event => event.type === 'turn/start')
    const wanted = recorded ?? (started ? 'dsh-native' : fresh)
    this.ctx.on('session/event', (subject, event) => {
      if (subject === session && event.type === CONTEXT_MODE_EVENT) this.enter(event.data.mode)
    })
    try {
      await this.check(wanted)
    } catch (error: unknown) {
      if (!(error instanceof AgentTavernError)) throw error
      this.refused = { requested: wanted, code: error.code, reason: error.message, missing: error.missing }
      this.mode = recorded ?? 'dsh-native'
      this.ctx.logger('agent-tavern').warn(`${error.message}; it runs ${this.mode}`)
      // A dsh-session without the seam cannot append an ignorable event, and a log holding one it does not know
      // could not be resumed by that build: the refusal stays off the log there.
      if (hasAgentContextSeam(this.ctx)) this.record('dsh-native', this.refused)
      return
    }
    if (recorded === undefined && wanted !== 'dsh-native') this.record(wanted)
    else this.enter(wanted)
  }

  /** Switch at an idle turn boundary; resolves once the switch is logged, persisted and in effect. */
  async set(mode: ContextMode): Promise<void> {
    assertContextMode(mode, String(this.agent.id))
    if (mode === this.mode) return
    await this.check(mode)
    let task: Promise<void>
    try {
      task = this.agent.runMaintenance(async () => {
        this.record(mode)
        await this.persist()
      })
    } catch (error: unknown) {
      throw new AgentTavernError('agent-busy', String(this.agent.id), `cannot switch to ${mode} while the agent is running; switch at an idle turn boundary`, [], { cause: error })
    }
    await task
  }

  /** Write the log through to the session store, when there is one, so the switch survives a crash. */
  private async persist(): Promise<void> {
    const sessions = this.ctx.get('sessions') as { flush?: (session: unknown) => Promise<void> } | undefined
    await sessions?.flush?.(this.agent.session)
  }

  private record(mode: ContextMode, refused?: ModeRefusal): void {
    const { session } = this.agent
    session.append(CONTEXT_MODE_EVENT, { mode, previous: this.mode, afterTurn: lastEndedTurn(logOf(session)), ...refused === undefined ? {} : { refused } }, { ignorable: true })
  }

  private enter(mode: ContextMode): void {
    this.mode = mode
    if (mode === 'agent-managed') this.leave ??= this.ctx.on('agent/context', this.projector)
    else {
      this.leave?.()
      this.leave = undefined
    }
  }
}

const controllers = new WeakMap<Agent, ModeController>()

function controllerOf(agent: Agent): ModeController {
  const controller = controllers.get(agent)
  if (controller === undefined) throw new AgentTavernError('not-mounted', String(agent.id), 'AgentTavern is not mounted on this agent')
  return controller
}

/**
 * The route's context window, read for every request, so a route change takes effect on the next one.
 * @param ctx - the agent's context.
 * @param agent - the agent.
 * @param signal - cancellation.
 * @returns the window, undefined when the route reports none.
 */
async function routeWindow(ctx: Context, agent: Agent, signal: AbortSignal): Promise<number | undefined> {
  const { provider, model } = currentRoute(agent)
  const key = `${provider}/${model}`
  let window = windows.get(agent)
  if (window?.key !== key) windows.set(agent, window = { key, value: (await ctx.llm.resolveModelInfo(provider, model, signal)).context?.contextWindow })
  return window.value
}

/** Each agent's newest route and its context window: a route change re-reads the window. */
const windows = new WeakMap<Agent, { readonly key: string; readonly value: number | undefined }>()

/**
 * Check that `agent-managed` can run: the host's capabilities, no model summaries unless a curator allows them
 * (`curator.summarizer`), and the policy against the route's context window, so
 * a config that could never project a request is refused at once and not on every turn. `dsh-native` always can:
 * its capacity is DSH's, never Tavern configuration.
 * @throws {AgentTavernError} `mode-unavailable`, `invalid-config` with the budgets and the window, or
 *   `no-context-window`.
 */
async function assertCanRun(ctx: Context, agent: Agent, config: TavernConfig, mode: ContextMode): Promise<void> {
  assertModeAvailable(ctx, String(agent.id), mode)
  if (mode === 'dsh-native') return
  if (compactionSummary(ctx) === 'model' && !config.curator.summarizer) {
    throw new AgentTavernError('hidden-summarizer', String(agent.id), 'agent-managed makes no hidden model calls, but the compaction engine summarizes with one; mount @dsh-seam/compaction-effective-projection with summary: reference, or set curator.summarizer: true to allow model summaries')
  }
  const { provider, model } = currentRoute(agent)
  const contextWindow = await routeWindow(ctx, agent, new AbortController().signal)
  if (contextWindow === undefined) {
    throw new AgentTavernError('no-context-window', String(agent.id), `route ${provider}/${model} reports no context window, so the agent-managed budget cannot be derived`)
  }
  try {
    budgetFor(config.policy, contextWindow)
  } catch (error: unknown) {
    if (!(error instanceof AgentTavernError)) throw error
    throw new AgentTavernError(error.code, String(agent.id), `route ${provider}/${model}: ${error.message.replace(/^AgentTavern: /, '')}`, [], { cause: error })
  }
}

/**
 * Push the scene, the newest facts and the triggered lore into every request as runtime-context snapshots
 * (`preloadAssets: true`); by default the model fetches them with `tavern_scene_get`, `memory_search` and
 * `tavern_lore_search` instead.
 */
function preloadAssets(ctx: Context, session: Agent['session'], config: TavernConfig): void {
  ctx.systemPrompt.context({
    name: PROMPT_NAMES.scene,
    order: 10,
    text: () => {
      const { text } = currentScene(logOf(session), config.scene)
      return text.length === 0 ? '' : `Current scene: ${text}`
    },
  })
  ctx.systemPrompt.context({
    name: PROMPT_NAMES.facts,
    order: 20,
    text: () => {
      const facts = activeMemories(logOf(session)).filter(record => record.tags.includes('fact')).slice(-config.factsLimit)
      return facts.length === 0 ? '' : `Facts of the story:\n${facts.map(record => `- ${record.text}`).join('\n')}`
    },
  })
  ctx.systemPrompt.context({
    name: PROMPT_NAMES.lore,
    order: 30,
    text: () => loreContext(triggeredLore(config.lore.entries, logOf(session), config.lore.scanTurns)),
  })
}

/**
 * Apply AgentTavern to the agent whose context this is.
 * @param ctx - the agent's context (`agent.ctx`) or a preset context derived from it.
 * @param raw - the plugin config.
 * @throws {AgentTavernError} `no-agent` off an agent context, or `invalid-config`. A session mode (recorded, or
 *   `contextMode` for a fresh session) the host cannot run, or whose policy does not fit the route's window, does not
 *   throw: the session runs `dsh-native` and the refusal is logged ({@link contextModeRefusal}).
 */
export async function apply(ctx: Context, raw: TavernConfig): Promise<void> {
  const config = resolveConfig(raw)
  const agent = ctx.agent
  if (agent === undefined) throw new AgentTavernError('no-agent', undefined, 'mount the plugin on an agent\'s context (agent.ctx) or in an agent preset')

  const { session } = agent
  const { character } = config
  ctx.systemPrompt.section({ name: PERSONA_SECTION, order: PERSONA_ORDER, text: `You are ${character.name}. ${character.identity}` })
  ctx.systemPrompt.section({ name: PROMPT_NAMES.kernel, order: KERNEL_ORDER, text: config.kernel })
  if (config.preloadAssets) preloadAssets(ctx, session, config)
  for (const tool of tavernTools(session, config)) ctx.tools.register(tool)
  registerReminders(ctx, agent, config.anchorEvery)
  // A compaction's reference names the history tools that read the span back, unless the engine has its own hint.
  ctx.effect(() => offerReferenceHint(ctx, agent, TAVERN_REFERENCE_HINT), 'agent-tavern.referenceHint()')

  const projector = managedProjector(agent, config.policy, { meter: ctx.tokenMeter, contextWindow: signal => routeWindow(ctx, agent, signal) })
  const controller = new ModeController(ctx, agent, projector, mode => assertCanRun(ctx, agent, config, mode))
  await controller.start(config.contextMode)
  ctx.effect(() => {
    controllers.set(agent, controller)
    return () => controllers.delete(agent)
  }, 'agent-tavern.mode()')
}

/**
 * Switch an agent's context mode. The switch is appended to the session log as an `agent-tavern/context-mode` event
 * while the agent is idle between turns, so a resumed session runs the mode it was left in.
 * @param agent - an agent with AgentTavern mounted.
 * @param mode - the mode from the next request on.
 * @returns once the switch is logged and in effect; at once when the agent already runs `mode`.
 * @throws {AgentTavernError} `not-mounted`, `invalid-config` for a value that is not a mode, `mode-unavailable`,
 *   `no-context-window` or `invalid-config` when the host cannot run `mode` (nothing is recorded, the mode stays), or
 *   `agent-busy` while a turn or maintenance task runs.
 */
export function setContextMode(agent: Agent, mode: ContextMode): Promise<void> {
  return controllerOf(agent).set(mode)
}

/**
 * @param agent - an agent with AgentTavern mounted.
 * @returns its current context mode.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function contextModeOf(agent: Agent): ContextMode {
  return controllerOf(agent).mode
}

/**
 * @param agent - an agent with AgentTavern mounted.
 * @returns why the mode its session asked for at mount was refused (it runs `dsh-native` instead), else undefined.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function contextModeRefusal(agent: Agent): ModeRefusal | undefined {
  return controllerOf(agent).refused
}

/**
 * The managed listener's newest selection (budgets, tokens, cache epoch), for inspection and demos.
 * @param agent - an agent with AgentTavern mounted.
 * @returns the selection, or undefined before the first managed request.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function lastSelection(agent: Agent): ReturnType<ManagedProjector['last']> {
  return controllerOf(agent).projector.last()
}
