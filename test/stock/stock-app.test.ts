/**
 * The public packages in an app on stock DSH rc.8: every `@deepseek-ai/*` import resolves from the unmodified npm set
 * (`stock-resolve.mjs`, in a child process, so no patched module is loaded beside it). Nothing crashes at import,
 * detection answers false, `assertAgentContextSeam` fails loud, AgentTavern refuses activating `agent-managed` closed
 * (`architecture-conflict`, `mode-unavailable`) and runs `dsh-native` with a log stock DSH can read (the CLI verifies it there), and
 * `readSessionLog` reads a log stock DSH's own backend wrote Zstandard-compressed to the events its session holds. On the patched set the guard
 * passes, and without an agent loop it names that.
 */

import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import { AgentContextSeamError, assertAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import { bootLoop, patchedDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url))

describe('an app on stock DSH rc.8', () => {
  it('imports every public package, refuses the seam loudly and runs AgentTavern in dsh-native', () => {
    const out = execFileSync(process.execPath, ['--import', here('./stock-resolve.mjs'), here('./stock-app.mjs')], { encoding: 'utf8' })
    const seen = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>
    expect(seen).toEqual({
      imported: [
        '@dsh-seam/agent-context',
        '@dsh-seam/agent-loop-patch',
        '@dsh-seam/agent-tavern',
        '@dsh-seam/compaction-effective-projection',
        '@dsh-seam/cli',
      ],
      stockSession: true,
      hasSeam: false,
      guard: { name: 'AgentContextSeamError', missing: 'request-projection', message: expect.stringMatching(/^my-policy needs the agent\/context seam, and this app has a stock DSH build/) },
      mode: 'dsh-native',
      refusal: { code: 'architecture-conflict', reason: 'mode-unavailable', missing: ['agent/context', 'projection-aware-compaction'] },
      turns: 3,
      requests: 3,
      errors: [],
      unknownTypes: [],
      verify: { exit: 0, out: expect.stringMatching(/^verified <root>\/.*session\.jsonl: 3 requests rebuilt from \d+ events; 0 request\/projection events hold the host invariants$/) },
      compressedLog: { zstd: true, events: expect.any(Number), same: true },
    })
  })
})

describe('assertAgentContextSeam on the patched set', () => {
  it('passes with the seam, and names a missing agent loop', async () => {
    const loop = await bootLoop(await patchedDsh())
    expect(() => assertAgentContextSeam(loop.ctx, 'my-policy')).not.toThrow()
    const bare = new Context()
    expect(() => assertAgentContextSeam(bare)).toThrow(AgentContextSeamError)
    expect(() => assertAgentContextSeam(bare)).toThrow(/^this plugin needs the agent\/context seam, and this app has no agentLoop service/)
  })
})
