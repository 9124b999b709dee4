/** `agent/context` is scope-filtered like `agent/pre-step`: agent-scoped and preset-scoped listeners see only their agent. */

import type { Context } from '@deepseek-ai/cordis'
import { bootLoop, patchedDsh, textReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { textOf } from './support.ts'

const dsh = await patchedDsh()

describe('agent/context scope filtering', () => {
  it('delivers agent-scoped and preset-scoped listeners only their own agent; root listeners see every agent', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const a = loop.create('agent-a')
    const b = loop.create('agent-b')
    const seen: Record<string, Set<string>> = { a: new Set(), b: new Set(), preset: new Set(), root: new Set() }
    const texts: Record<string, string[]> = { a: [], b: [] }
    const record = (key: string) => async ({ agent, nodes }: { agent: { id: string }; nodes: readonly { message: Parameters<typeof textOf>[0] }[] }, next: () => Promise<{ include: readonly number[] }>) => {
      seen[key]!.add(String(agent.id))
      if (key in texts) texts[key]!.push(...nodes.map(n => textOf(n.message)))
      return next()
    }
    a.ctx.on('agent/context', record('a'))
    b.ctx.on('agent/context', record('b'))
    loop.ctx.on('agent/context', record('root'))
    // A preset mounted for agent A registers inside A's scope.
    await a.ctx.plugin({ name: 'context-preset', apply: (ctx: Context) => { ctx.on('agent/context', record('preset')) } })
    await Promise.all([loop.say(a, 'from A'), loop.say(b, 'from B')])
    await Promise.all([loop.say(a, 'again A'), loop.say(b, 'again B')])
    expect([...seen.a!]).toEqual(['agent-a'])
    expect([...seen.b!]).toEqual(['agent-b'])
    expect([...seen.preset!]).toEqual(['agent-a'])
    expect([...seen.root!].sort()).toEqual(['agent-a', 'agent-b'])
    expect(texts.a!.filter(t => t.includes('B'))).toEqual([])
    expect(texts.b!.filter(t => t.includes('A'))).toEqual([])
  })
})
