/**
 * Request token figures from DSH's token meter: messages priced by `ctx.tokenMeter.estimateMessage`, the system
 * prompt and tool schemas by the meter's own fixed density (characters / 4 plus a 4-token frame, the rule of
 * `@deepseek-ai/dsh-token-meter`'s `estimateSystemTokens` / `estimateToolsTokens`, which its package root does not export).
 * @module @dsh-context/agent-tavern/tokens
 */

import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'

const CHARS_PER_TOKEN = 4
const FRAME_TOKENS = 4

/** The part of the token meter a request is priced with. */
export interface MessagePricer {
  estimateMessage(message: Message): number
}

/**
 * Tokens of a request header.
 * @param system - the rendered system prompt; empty when absent.
 * @param tools - the tool schemas sent.
 * @returns system plus tool-schema tokens, 0 for an empty header.
 */
export function headerTokens(system: string | undefined, tools: readonly ToolSchema[] | undefined): number {
  const systemTokens = system === undefined || system.length === 0 ? 0 : Math.ceil(system.length / CHARS_PER_TOKEN) + FRAME_TOKENS
  const toolTokens = tools === undefined || tools.length === 0 ? 0 : Math.ceil(JSON.stringify(tools).length / CHARS_PER_TOKEN) + FRAME_TOKENS
  return systemTokens + toolTokens
}

/**
 * Tokens of a whole request.
 * @param meter - `ctx.tokenMeter`.
 * @param request - its system prompt, tools and messages.
 * @returns header plus message tokens.
 */
export function requestTokens(meter: MessagePricer, request: { system?: string; tools?: readonly ToolSchema[]; messages: readonly Message[] }): number {
  return request.messages.reduce((sum, message) => sum + meter.estimateMessage(message), headerTokens(request.system, request.tools))
}
