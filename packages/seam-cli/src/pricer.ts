/**
 * Token estimates from DSH's own token meter, so `dsh-seam` prices a request exactly as compaction pressure does
 * (`priceRequest` of `@dsh-seam/compaction-effective-projection` over the meter's `estimateHeader` and
 * `estimateMessage`).
 * @module @dsh-seam/cli/pricer
 */

import { Context } from '@deepseek-ai/cordis'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { EpochHeader } from '@deepseek-ai/dsh-session'
import { Session, SessionId } from '@deepseek-ai/dsh-session'
import TokenMeter from '@deepseek-ai/dsh-token-meter'
import type { TokenPricer } from './analyze.ts'

/**
 * Mount `@deepseek-ai/dsh-token-meter` in a private context and price with its `estimateMessage` and
 * `estimateHeader`, cached per frozen message and header object (a log shares them across requests).
 * @returns the pricer and the disposer of its context.
 */
export async function meterPricer(): Promise<{ pricer: TokenPricer; dispose: () => Promise<void> }> {
  const ctx = new Context()
  await ctx.plugin(TokenMeter)
  const meter = ctx.tokenMeter
  const price = headerPrice(meter)
  const messages = new WeakMap<Message, number>()
  const headers = new WeakMap<Pick<EpochHeader, 'system' | 'tools'>, number>()
  const pricer: TokenPricer = {
    estimateMessage(message) {
      let tokens = messages.get(message)
      if (tokens === undefined) messages.set(message, tokens = meter.estimateMessage(message))
      return tokens
    },
    estimateHeader(header) {
      if (header === undefined) return price(header)
      let tokens = headers.get(header)
      if (tokens === undefined) headers.set(header, tokens = price(header))
      return tokens
    },
  }
  return { pricer, dispose: async () => { await ctx.fiber.dispose() } }
}

type Header = Pick<EpochHeader, 'system' | 'tools'> | undefined

/**
 * The meter's `estimateHeader`; a stock rc.8 meter lacks it (the seam's patch adds it), and there `measure()` of an
 * empty session with the header as its request header is the same heuristic (the header is its whole baseline).
 */
function headerPrice(meter: Context['tokenMeter']): (header: Header) => number {
  const patched = meter as Partial<Pick<Context['tokenMeter'], 'estimateHeader'>>
  if (patched.estimateHeader !== undefined) return header => meter.estimateHeader(header)
  const empty = Session.create(SessionId('dsh-seam-header-price'), [])
  return header => header === undefined ? 0 : meter.measure(empty, header as EpochHeader).totalTokens
}
