/**
 * The `projection-aware-compaction` capability: true only for this package's engine measuring projections on the
 * patched loop, as the AgentTavern capability check reads it; misconfiguration fails plugin load.
 */

import { hasProjectionAwareCompaction, ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { inspectCapabilities } from '@dsh-seam/agent-tavern'
import type { DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, patchedDsh, stockDsh } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'

const [patched, stock] = [await patchedDsh(), await stockDsh()]

async function capabilities(dsh: DshModules, plugin?: [unknown, unknown?]) {
  const loop = await bootLoop(dsh, plugin === undefined ? {} : { plugins: [plugin] })
  const agent = loop.create('capability')
  const ctx = agent.ctx
  return {
    flag: hasProjectionAwareCompaction(ctx),
    tavernMissing: inspectCapabilities(ctx).managed.missing.includes('projection-aware-compaction'),
  }
}

describe('projection-aware-compaction capability', () => {
  it('is available on the patched loop with this engine measuring projections', async () => {
    expect(await capabilities(patched, [ProjectionAwareCompactionEngine])).toEqual({ flag: true, tavernMissing: false })
    expect(await capabilities(patched, [ProjectionAwareCompactionEngine, { pressure: 'overflow-only' }])).toEqual({ flag: true, tavernMissing: false })
  })

  it('follows the loop with measure: auto, so one deployment row serves a patched and a stock build', async () => {
    expect(await capabilities(patched, [ProjectionAwareCompactionEngine, { measure: 'auto' }])).toEqual({ flag: true, tavernMissing: false })
    expect(await capabilities(stock, [ProjectionAwareCompactionEngine, { measure: 'auto' }])).toEqual({ flag: false, tavernMissing: true })
    await expect(bootLoop(stock, { plugins: [[ProjectionAwareCompactionEngine, { measure: 'projection' }]] })).rejects.toThrow(/needs the agent\/context seam/)
  })

  it('is unavailable with measure: surface, stock compaction-basic, no compaction, or the stock rc.8 build', async () => {
    const unavailable = { flag: false, tavernMissing: true }
    expect(await capabilities(patched, [ProjectionAwareCompactionEngine, { measure: 'surface' }])).toEqual(unavailable)
    expect(await capabilities(patched, [patched.compactionBasic.default])).toEqual(unavailable)
    expect(await capabilities(patched)).toEqual(unavailable)
    expect(await capabilities(stock, [stock.compactionBasic.default])).toEqual(unavailable)
  })

  it('fails plugin load on a measure or pressure it does not know, or a key the basic engine does not know', async () => {
    const load = (config: unknown) => bootLoop(patched, { plugins: [[ProjectionAwareCompactionEngine, config]] })
    await expect(load({ measure: 'request' })).rejects.toThrow(/measure/)
    await expect(load({ pressure: 'sometimes' })).rejects.toThrow(/pressure/)
    await expect(load({ measures: 'projection' })).rejects.toThrow('BasicCompactionConfig: unknown key "measures"')
  })
})
