/**
 * Offline real-loop test kit for DSH 0.1.0-rc.8: module sets (patched and stock), a scripted adapter and a boot.
 * @module @dsh-seam/loop-testkit
 */

export { patchedDsh, stockDsh } from './modules.ts'
export type { DshModules } from './modules.ts'
export { failureReply, scriptedAdapter, textReply, toolCallReply } from './adapter.ts'
export type { ScriptEntry, ScriptedAdapter, ScriptedAdapterOptions } from './adapter.ts'
export { bootLoop } from './boot.ts'
export type { BootOptions, BootedLoop } from './boot.ts'
export { canonicalJson } from './canonical.ts'
export { rebuildRequestsByPrefix, requestStarts } from './prefix-rebuild.ts'
export type { PrefixRequest } from './prefix-rebuild.ts'
export { conversationReply, conversationTurn, keepLastNodes, sessionLogPath } from './conversation.ts'
export type { ContextListener } from './conversation.ts'
