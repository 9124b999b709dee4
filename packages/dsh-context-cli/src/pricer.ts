/**
 * Token estimates from DSH's own token meter, so `dsh-context` prices a request exactly as compaction pressure does.
 * @module @dsh-context/cli/pricer
 */

import { Context } from '@deepseek-ai/cordis'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { EpochHeader } from '@deepseek-ai/dsh-session'
import { Session, SessionId } from '@deepseek-ai/dsh-session'
import TokenMeter from '@deepseek-ai/dsh-token-meter'
import type { TokenPricer } from './analyze.ts'

/**
 * Mount `@deepseek-ai/dsh-token-meter` in a private context and price with it: a message by
 * `tokenMeter.estimateMessage`, a request envelope by measuring an empty session under that header (the meter's
 * heuristic system-prompt plus tool-schema price). Prices are cached per frozen message and header object.
 * @returns the pricer and the disposer of its context.
 */
export async function meterPricer(): Promise<{ pricer: TokenPricer; dispose: () => Promise<void> }> {
  const ctx = new Context()
  await ctx.plugin(TokenMeter)
  const meter = ctx.tokenMeter
  const empty = Session.create(SessionId('dsh-context-envelope'))
  const messages = new WeakMap<Message, number>()
  const headers = new WeakMap<EpochHeader, number>()
  const pricer: TokenPricer = {
    message(message) {
      let tokens = messages.get(message)
      if (tokens === undefined) messages.set(message, tokens = meter.estimateMessage(message))
      return tokens
    },
    header(header) {
      if (header === undefined) return 0
      let tokens = headers.get(header)
      if (tokens === undefined) headers.set(header, tokens = meter.measure(empty, header).totalTokens)
      return tokens
    },
  }
  return { pricer, dispose: async () => { await ctx.fiber.dispose() } }
}
