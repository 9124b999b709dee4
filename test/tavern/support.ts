/**
 * Shared set-up of the AgentTavern tests: a real loop with projection-aware compaction, the character, the loop's
 * own requests, and a replay check of a whole session.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions, StreamChunk } from '@deepseek-ai/dsh-llm'
import { diffRequest, replayRequests } from '@dsh-seam/agent-context'
import type { ContextMode } from '@dsh-seam/agent-tavern'
import { AgentTavern, contentText, TAVERN_REFERENCE_HINT } from '@dsh-seam/agent-tavern'
import { roleplayReply } from '@dsh-seam/agent-tavern-demo'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import type { BootedLoop, BootOptions, DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { expect } from 'vitest'

/** The character the tests mount. */
export const MIRA = { name: 'Mira', identity: 'The ferrywoman of the Grey Estuary.' }

/** A small window: the policy forgets within a few turns (recent budget 1,200 tokens, blocks of 600). */
const SMALL_WINDOW = 20_000
export const SMALL_POLICY = { blockTokens: 600 }

/**
 * The demo's roleplay model, plus a test hook: a user message `CALL <tool> <json arguments>` makes the model call that
 * tool, and the step after it answers `RESULT <the tool result text>`.
 * @param request - the request.
 * @param index - its index among the adapter's requests.
 * @returns the reply chunks.
 */
export function toolModel(request: GenerateOptions, index: number): StreamChunk[] {
  const asked = request.messages.findLast(message => message.source.kind === 'user')
  const call = /^CALL (\S+) (.*)$/s.exec(asked === undefined ? '' : contentText(asked.content))
  if (call === null) return roleplayReply(request, index)
  const result = request.messages.findLast(message => message.source.kind !== 'plugin')?.content.find(block => block.type === 'tool-result')
  if (result !== undefined) return textReply(`RESULT ${contentText(result.content)}`)
  return toolCallReply([{ id: `call-${index + 1}`, name: call[1] as string, args: JSON.parse(call[2] as string) as unknown }])
}

/**
 * A patched loop with the projection-aware engine as `ctx.compaction` (no model summaries: `summary: 'reference'`),
 * answering with the demo's roleplay model.
 * @param options - boot options merged over the defaults.
 * @returns the loop.
 */
export async function tavernLoop(options: BootOptions = {}): Promise<BootedLoop> {
  return bootLoop(await patchedDsh(), {
    contextWindow: SMALL_WINDOW,
    fallback: toolModel,
    plugins: [[ProjectionAwareCompactionEngine, { measure: 'projection', summary: 'reference', referenceHint: TAVERN_REFERENCE_HINT }]],
    ...options,
  })
}

/**
 * Create an agent and mount AgentTavern on it.
 * @param loop - the loop.
 * @param id - session id.
 * @param contextMode - the fresh session's mode.
 * @param policy - policy config fields.
 * @param extra - other config fields (e.g. `preloadAssets`).
 * @returns the agent.
 */
export async function tavernAgent(loop: BootedLoop, id: string, contextMode: ContextMode, policy: object = SMALL_POLICY, extra: object = {}): Promise<Agent> {
  const agent = loop.create(id)
  await agent.ctx.plugin(AgentTavern, { character: MIRA, scene: 'the ferry dock at dawn', contextMode, policy, ...extra } as never)
  return agent
}

/**
 * The loop requests the provider received (compaction summaries excluded).
 * @param loop - the loop.
 * @returns them in order.
 */
export function loopRequests(loop: { dsh: DshModules; adapter: { requests: GenerateOptions[] } }): GenerateOptions[] {
  return loop.adapter.requests.filter(request => loop.dsh.llm.isAgentLoopRequest(request))
}

/**
 * Assert that every loop request of a session is rebuilt from its log.
 * @param sent - the requests as sent, in order.
 * @param agent - the agent whose log is replayed.
 */
export function expectRebuiltFromLog(sent: readonly GenerateOptions[], agent: Agent): void {
  const replayed = replayRequests(agent.session.events)
  expect(replayed).toHaveLength(sent.length)
  expect(replayed.map((request, i) => diffRequest(request, sent[i] as GenerateOptions))).toEqual(sent.map(() => undefined))
}

/**
 * The assets AgentTavern preloaded at activation, as a request or log holds them (a `dsh-tavern` snapshot).
 * @param messages - request messages.
 * @returns its text, or '' when none.
 */
export function preloadedAssets(messages: readonly { source: GenerateOptions['messages'][number]['source']; content: GenerateOptions['messages'][number]['content'] }[]): string {
  const snapshot = messages.findLast(message => message.source.kind === 'plugin' && message.source.plugin === 'dsh-tavern' && message.source.form === 'snapshot')
  return snapshot === undefined ? '' : contentText(snapshot.content)
}
