/**
 * The AgentTavern cordis plugin. Mounted on one agent's context (`agent.ctx.plugin(AgentTavern, config)`, or as a
 * row of an agent preset), it checks its policy against the route's context window, then registers, in that agent's
 * scope only: the character as the persona section, the kernel contract section, the scene, facts and triggered lore
 * as runtime-context snapshots, the tools, the opening and anchor reminders, and, while the session's mode is
 * `agent-managed`, the `agent/context` listener.
 * @module @dsh-context/agent-tavern/plugin
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { PERSONA_ORDER, PERSONA_SECTION } from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-token-meter'
import { registerReminders } from './anchor.ts'
import { assertModeAvailable } from './capabilities.ts'
import type { Config as TavernConfig } from './config.ts'
import { Config as ConfigSchema, resolveConfig } from './config.ts'
import { AgentTavernError } from './errors.ts'
import { currentRoute, logOf } from './host-log.ts'
import { managedProjector } from './listener.ts'
import type { ManagedProjector } from './listener.ts'
import { loreContext, triggeredLore } from './lore.ts'
import { activeMemories } from './memory.ts'
import type { ContextMode } from './mode.ts'
import { CONTEXT_MODE_EVENT, lastEndedTurn, recordedMode } from './mode.ts'
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
  private leave: (() => void) | undefined

  constructor(
    private readonly ctx: Context,
    private readonly agent: Agent,
    readonly projector: ManagedProjector,
  ) {}

  /** Enter the logged mode, recording `fresh` first when the session has no turns and no recorded mode. */
  start(fresh: ContextMode): void {
    const { session } = this.agent
    const recorded = recordedMode(logOf(session))
    const started = logOf(session).some(event => event.type === 'turn/start')
    const mode = recorded ?? (started ? 'dsh-native' : fresh)
    assertModeAvailable(this.ctx, String(this.agent.id), mode)
    this.ctx.on('session/event', (subject, event) => {
      if (subject === session && event.type === CONTEXT_MODE_EVENT) this.enter(event.data.mode)
    })
    if (recorded === undefined && mode !== 'dsh-native') this.record(mode)
    else this.enter(mode)
  }

  /** Switch at an idle turn boundary; resolves once the switch is logged and in effect. */
  async set(mode: ContextMode): Promise<void> {
    if (mode === this.mode) return
    assertModeAvailable(this.ctx, String(this.agent.id), mode)
    let task: Promise<void>
    try {
      task = this.agent.runMaintenance(() => Promise.resolve(this.record(mode)))
    } catch (error: unknown) {
      throw new AgentTavernError('agent-busy', String(this.agent.id), `cannot switch to ${mode} while the agent is running; switch at an idle turn boundary`, [], { cause: error })
    }
    await task
  }

  private record(mode: ContextMode): void {
    const { session } = this.agent
    session.append(CONTEXT_MODE_EVENT, { mode, previous: this.mode, afterTurn: lastEndedTurn(logOf(session)) }, { ignorable: true })
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
 * Check the policy against the route's context window, so a config that could never project a request fails here and
 * not on every turn.
 * @param agent - the agent.
 * @param config - the resolved config.
 * @param contextWindow - the route's context window, when it reports one.
 * @throws {AgentTavernError} `invalid-config` with the budgets and the window; `no-context-window` when a fresh
 *   `agent-managed` session's route reports none.
 */
function assertFitsWindow(agent: Agent, config: TavernConfig, contextWindow: number | undefined): void {
  const route = `${agent.options.provider}/${agent.options.model}`
  if (contextWindow === undefined) {
    if (config.contextMode === 'dsh-native') return
    throw new AgentTavernError('no-context-window', String(agent.id), `route ${route} reports no context window, so the agent-managed budget cannot be derived`)
  }
  try {
    budgetFor(config.policy, contextWindow)
  } catch (error: unknown) {
    if (!(error instanceof AgentTavernError)) throw error
    throw new AgentTavernError(error.code, String(agent.id), `route ${route}: ${error.message.replace(/^AgentTavern: /, '')}`, [], { cause: error })
  }
}

/**
 * Apply AgentTavern to the agent whose context this is.
 * @param ctx - the agent's context (`agent.ctx`) or a preset context derived from it.
 * @param raw - the plugin config.
 * @throws {AgentTavernError} `no-agent` off an agent context, `invalid-config` (also when the policy does not fit the
 *   route's context window), or `mode-unavailable` when the session's mode (recorded, or `contextMode` for a fresh
 *   session) cannot run on this host.
 */
export async function apply(ctx: Context, raw: TavernConfig): Promise<void> {
  const config = resolveConfig(raw)
  const agent = ctx.agent
  if (agent === undefined) throw new AgentTavernError('no-agent', undefined, 'mount the plugin on an agent\'s context (agent.ctx) or in an agent preset')
  const route = agent.options
  const info = await ctx.llm.resolveModelInfo(route.provider ?? '', route.model ?? '', new AbortController().signal)
  const mounted = info.context?.contextWindow
  assertFitsWindow(agent, config, mounted)

  const { session } = agent
  const { character } = config
  ctx.systemPrompt.section({ name: PERSONA_SECTION, order: PERSONA_ORDER, text: `You are ${character.name}. ${character.identity}` })
  ctx.systemPrompt.section({ name: PROMPT_NAMES.kernel, order: KERNEL_ORDER, text: config.kernel })
  ctx.systemPrompt.context({
    name: PROMPT_NAMES.scene,
    order: 10,
    text: () => {
      const scene = activeMemories(logOf(session)).findLast(record => record.tags.includes('scene'))?.text ?? config.scene
      return scene.length === 0 ? '' : `Current scene: ${scene}`
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
  for (const tool of tavernTools(session, config.tools, config.lore.entries)) ctx.tools.register(tool)
  registerReminders(ctx, agent, config.anchorEvery)

  const projector = managedProjector(agent, config.policy, { meter: ctx.tokenMeter, contextWindow: () => Promise.resolve(mounted) })
  const controller = new ModeController(ctx, agent, projector)
  controller.start(config.contextMode)
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
 * @throws {AgentTavernError} `not-mounted`, `mode-unavailable` (nothing is recorded), or `agent-busy` while a turn or
 *   maintenance task runs.
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
 * The managed listener's newest selection (budgets, tokens, cache epoch), for inspection and demos.
 * @param agent - an agent with AgentTavern mounted.
 * @returns the selection, or undefined before the first managed request.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function lastSelection(agent: Agent): ReturnType<ManagedProjector['last']> {
  return controllerOf(agent).projector.last()
}
