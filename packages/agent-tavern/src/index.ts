/**
 * AgentTavern on DSH 0.1.0-rc.8: a roleplay plugin mounted per agent, with two context modes per session
 * (`dsh-native`, `agent-managed`), its capability check, and the shapes of what its tools return. The module itself is
 * the cordis plugin (`name`, `inject`, `Config`, `apply`).
 * @module @dsh-seam/agent-tavern
 */

import * as AgentTavern from './plugin.ts'

export { AgentTavern }
export { apply, Config, contextModeOf, contextModeRefusal, inject, lastSelection, name, recordedContextMode, setContextMode } from './plugin.ts'
export { tavernBindings } from './binding.ts'
export type { TavernArchitecture, TavernBinding, TavernBindings } from './binding.ts'
export type { SessionFormat } from './host-log.ts'
export { TAVERN_REFERENCE_HINT } from './config.ts'
export type { CharacterConfig, CuratorConfig, LoreConfig, ToolLimits } from './config.ts'
export { AgentTavernError, TavernArchitectureConflictError } from './errors.ts'
export type { AgentTavernErrorCode } from './errors.ts'
export { default as TavernCompactionCurator, ROLEPLAY_CHECKPOINT, usageGate } from './compaction.ts'
export type { CuratorSettings, UsageGateDecision } from './compaction.ts'
export { inspectCapabilities } from './capabilities.ts'
export { managedListener } from './listener.ts'
export type { ListenerServices, ManagedProjector } from './listener.ts'
export type { ModeAvailability, TavernCapabilities, TavernCapability } from './capabilities.ts'
export type { ContextMode, ModeRefusal } from './mode.ts'
export type { PolicyBudget, PolicyConfig, PolicySelection } from './policy.ts'
export type { LoreEntry } from './lore.ts'
export { contentText } from './log.ts'
export type { HistorySearch } from './log.ts'
export { TOOL_NAMES } from './tools.ts'
