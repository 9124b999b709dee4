/**
 * A deterministic scripted conversation for long and concurrent runs: replies that depend only on the request, user
 * turns that call the `echo` tool at a fixed rate, a keep-the-tail `agent/context` listener, and the persisted log's
 * path.
 * @module @dsh-seam/loop-testkit/conversation
 */

import type { Agent, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { SessionHeader } from '@deepseek-ai/dsh-session'
import type { ScriptEntry } from './adapter.ts'
import { textReply, toolCallReply } from './adapter.ts'
import type { BootedLoop } from './boot.ts'

/** A user turn containing this text gets one `echo` tool call before the text answer. */
const TOOL_PROMPT = 'use the echo tool'

/**
 * The user text of turn `turn` (1-based): every third turn asks for the tool.
 * @param turn - the turn number.
 * @returns the prompt.
 */
export function conversationTurn(turn: number): string {
  return turn % 3 === 0 ? `Turn ${turn}: ${TOOL_PROMPT}.` : `Turn ${turn}: tell me more.`
}

/**
 * A reply that is a function of the request alone, so concurrent agents sharing one adapter get the same answers in
 * any interleaving: a request ending in a user text with {@link TOOL_PROMPT} gets an `echo` call with id
 * `call-<request index>`; any other request gets a text answer naming its message count.
 * @returns the script entry, for `fallback`.
 */
export function conversationReply(): ScriptEntry {
  return (request, index) => {
    const last = request.messages.at(-1)
    const asked = last?.role === 'user' && last.content.some(block => block.type === 'text' && block.text.includes(TOOL_PROMPT))
    if (asked) return toolCallReply([{ id: `call-${index}`, name: 'echo', args: { text: `request ${index}` } }])
    return textReply(`Answer to a request of ${request.messages.length} messages.`)
  }
}

/** The `agent/context` listener signature. */
export type ContextListener = (
  payload: { readonly nodes: readonly { readonly seq: number }[] },
  next: () => Promise<ContextSelection>,
) => Promise<ContextSelection>

/**
 * An `agent/context` listener that keeps the last `count` nodes (the host adds required seqs and whole tool units).
 * @param count - nodes to keep.
 * @param revision - the revision label it reports.
 * @returns the listener; it calls `next()` first.
 */
export function keepLastNodes(count: number, revision = `keep-last-${count}`): ContextListener {
  return async ({ nodes }, next) => {
    await next()
    return { include: nodes.slice(-count).map(node => node.seq), revision }
  }
}

/**
 * The JSONL file a booted loop with `persistRoot` writes an agent's session to.
 * @param loop - a loop booted with `persistRoot`.
 * @param agent - the agent.
 * @returns the file path.
 * @throws {Error} when the loop has no persistence or its backend has no file location.
 */
export function sessionLogPath(loop: BootedLoop, agent: Agent): string {
  const persistence = loop.ctx.get('sessionPersistence') as { locate(meta: SessionHeader): { path?: string } | undefined } | undefined
  const path = persistence?.locate(agent.session.header)?.path
  if (path === undefined) throw new Error(`session "${String(agent.id)}" has no persisted file: boot the loop with persistRoot`)
  return path
}
