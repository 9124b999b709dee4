/**
 * `dsh-seam` on the AgentTavern demo's sessions, persisted: the demo's roleplay in both context modes on a real
 * patched loop with projection-aware compaction; native mode on a window small enough that it compacts, so the logs hold
 * tool units, surface replaces and managed projections.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isAgentLoopRequest } from '@deepseek-ai/dsh-llm'
import type { ContextMode } from '@dsh-seam/agent-tavern'
import { AgentTavern } from '@dsh-seam/agent-tavern'
import { demoCompaction, MIRA, OPENING_SCENE, roleplayReply, story } from '@dsh-seam/agent-tavern-demo'
import type { RequestSummary } from '@dsh-seam/cli'
import { EXIT } from '@dsh-seam/cli'
import { bootLoop, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from './support.ts'

const TURNS = 60
/** Native mode compacts within 60 turns on 12,000 tokens; managed mode runs on the demo's window (its policy needs it). */
const WINDOW: Record<ContextMode, number> = { 'dsh-native': 12_000, 'agent-managed': 90_000 }
const root = mkdtempSync(join(tmpdir(), 'dsh-seam-tavern-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

async function persistedDemo(mode: ContextMode) {
  const loop = await bootLoop(await patchedDsh(), {
    persistRoot: root,
    contextWindow: WINDOW[mode],
    fallback: roleplayReply,
    plugins: [demoCompaction(mode)],
  })
  const agent = loop.create(`tavern-${mode}`)
  await agent.ctx.plugin(AgentTavern, { character: MIRA, scene: OPENING_SCENE, contextMode: mode } as never)
  for (const turn of story({ turns: TURNS })) await loop.say(agent, turn.text)
  await loop.ctx.sessions.flush(agent.session)
  expect(loop.errors.map(({ error }) => String(error))).toEqual([])
  const sent = loop.adapter.requests.filter(request => request.sessionId === agent.id && isAgentLoopRequest(request))
  return { path: sessionLogPath(loop, agent), sent, events: agent.session.events }
}

describe('dsh-seam on the AgentTavern demo\'s persisted sessions', () => {
  it.each(['dsh-native', 'agent-managed'] as const)('verifies and inspects the %s session', async mode => {
    const { path, sent, events } = await persistedDemo(mode)
    const verified = runCli('verify', path)
    expect(verified.stderr).toBe('')
    expect(verified.status).toBe(EXIT.ok)
    const { requests } = JSON.parse(runCli('inspect', path, '--json').stdout) as { requests: RequestSummary[] }
    expect(requests.map(request => request.includedNodes)).toEqual(sent.map(request => request.messages.length))
    const projected = requests.filter(request => request.projectionSeq !== undefined)
    if (mode === 'dsh-native') {
      expect(projected).toEqual([])
      expect(events.some(event => event.type === 'compaction/summary')).toBe(true)
    } else {
      expect(projected.length).toBeGreaterThan(requests.length / 2)
      expect(projected.every(request => request.revision !== undefined && request.tokens < request.surfaceTokens)).toBe(true)
    }
  })
})
