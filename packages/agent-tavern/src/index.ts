/**
 * AgentTavern on DSH 0.1.0-rc.8: a roleplay plugin mounted per agent, with two context modes per session
 * (`dsh-native`, `agent-managed`), the pure selection policy of the managed mode, the capability check, and tools that
 * read the durable log. The module itself is the cordis plugin (`name`, `inject`, `Config`, `apply`).
 * @module @dsh-context/agent-tavern
 */

import * as AgentTavern from './plugin.ts'

export { AgentTavern }
export { apply, Config, contextModeOf, inject, lastSelection, name, PROMPT_NAMES, setContextMode } from './plugin.ts'
export type { CharacterConfig, ToolLimits } from './config.ts'
export { DEFAULT_KERNEL, resolveConfig } from './config.ts'
export { AgentTavernError } from './errors.ts'
export type { AgentTavernErrorCode } from './errors.ts'
export { assertModeAvailable, inspectCapabilities, PROJECTION_AWARE_COMPACTION } from './capabilities.ts'
export type { ModeAvailability, TavernCapabilities, TavernCapability } from './capabilities.ts'
export { CONTEXT_MODE_EVENT, lastEndedTurn, recordedMode } from './mode.ts'
export type { ContextMode, ContextModeChange } from './mode.ts'
export { assertPolicyConfig, budgetFor, POLICY_VERSION, policyRevision, selectContext } from './policy.ts'
export type { PolicyBudget, PolicyConfig, PolicyInput, PolicyNode, PolicySelection, PolicyShares, PolicyState, PolicyWeights } from './policy.ts'
export { managedProjector, RUNTIME_CONTEXT_SOURCE, snapshotSource } from './listener.ts'
export type { ContextPayload, ListenerServices, ManagedProjector } from './listener.ts'
export { contentText, DEFAULT_IMPORTANCE, memoryNotes, messageText, readHistory, searchHistory, searchMemory, transcript } from './log.ts'
export type { HistoryHit, HistoryRange, MemoryHit, MemoryNote, TranscriptEntry } from './log.ts'
export { relevance, snippet, terms } from './lexical.ts'
export { TOOL_NAMES, tavernTools } from './tools.ts'
export { headerTokens, requestTokens } from './tokens.ts'
export type { MessagePricer } from './tokens.ts'
