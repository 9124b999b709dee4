/** `agent/context` is scope-filtered like `agent/pre-step`: agent-scoped and preset-scoped listeners see only their agent. */

import type { Context } from '@deepseek-ai/cordis'
import { bootLoop, patchedDsh, textReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { textOf } from './support.ts'

const dsh = await patchedDsh()

describe('agent/context scope filtering', () => {
  const record = (seen: Set<string>, texts?: string[]) => async ({ agent, nodes }: { agent: { id: string }; nodes: readonly { message: Parameters<typeof textOf>[0] }[] }, next: () => Promise<{ include: readonly number[] }>) => {
    seen.add(String(agent.id))
    texts?.push(...nodes.map(n => textOf(n.message)))
    return next()
  }

  it('delivers agent-scoped and preset-scoped listeners only their own agent; a root listener sees every agent', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const a = loop.create('agent-a')
    const b = loop.create('agent-b')
    const seenA = new Set<string>()
    const seenPreset = new Set<string>()
    const textsA: string[] = []
    a.ctx.on('agent/context', record(seenA, textsA))
    // A preset mounted for agent B registers inside B's scope.
    await b.ctx.plugin({ name: 'context-preset', apply: (ctx: Context) => { ctx.on('agent/context', record(seenPreset)) } })
    await Promise.all([loop.say(a, 'from A'), loop.say(b, 'from B')])
    await Promise.all([loop.say(a, 'again A'), loop.say(b, 'again B')])
    expect(loop.errors).toEqual([])
    expect([...seenA]).toEqual(['agent-a'])
    expect([...seenPreset]).toEqual(['agent-b'])
    expect(textsA.filter(t => t.includes('B'))).toEqual([])

    const rooted = await bootLoop(dsh, { fallback: textReply('ok') })
    const seenRoot = new Set<string>()
    rooted.ctx.on('agent/context', record(seenRoot))
    const c = rooted.create('agent-c')
    const d = rooted.create('agent-d')
    await Promise.all([rooted.say(c, 'from C'), rooted.say(d, 'from D')])
    expect(rooted.errors).toEqual([])
    expect([...seenRoot].sort()).toEqual(['agent-c', 'agent-d'])
  })

  it('counts a root listener among every agent\'s listeners: an agent with its own listener too fails loudly, the others run', async () => {
    const loop = await bootLoop(dsh, { fallback: textReply('ok') })
    const seen = new Set<string>()
    loop.ctx.on('agent/context', record(seen))
    const a = loop.create('agent-a')
    const b = loop.create('agent-b')
    a.ctx.on('agent/context', record(new Set()))
    await loop.say(a, 'from A')
    await loop.say(b, 'from B')
    expect(loop.errors.map(e => [String(e.agent.id), (e.error as { code?: string }).code])).toEqual([['agent-a', 'multiple-listeners']])
    expect([...seen]).toEqual(['agent-b'])
  })
})
