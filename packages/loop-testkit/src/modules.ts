/**
 * The DSH module set a loop is booted from: the patched packages this workspace installs, or the unmodified npm
 * rc.8 set under `stock/` for differential runs.
 * @module @dsh-seam/loop-testkit/modules
 */

import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The DSH 0.1.0-rc.8 modules a real loop needs, as namespace records. */
export interface DshModules {
  readonly kind: 'patched' | 'stock'
  readonly cordis: typeof import('@deepseek-ai/cordis')
  readonly llm: typeof import('@deepseek-ai/dsh-llm')
  readonly session: typeof import('@deepseek-ai/dsh-session')
  readonly sessionInvariant: typeof import('@deepseek-ai/dsh-session/invariant')
  readonly systemPrompt: typeof import('@deepseek-ai/dsh-system-prompt')
  readonly tools: typeof import('@deepseek-ai/dsh-tools')
  readonly agent: typeof import('@deepseek-ai/dsh-agent')
  readonly agentLoop: typeof import('@deepseek-ai/dsh-agent-loop')
  readonly agentLoopInvariant: typeof import('@deepseek-ai/dsh-agent-loop/invariant')
  readonly invariants: typeof import('@deepseek-ai/dsh-invariants')
  readonly tokenMeter: typeof import('@deepseek-ai/dsh-token-meter')
  readonly compaction: typeof import('@deepseek-ai/dsh-compaction')
  readonly compactionBasic: typeof import('@deepseek-ai/dsh-compaction-basic')
  readonly persistenceJsonl: typeof import('@deepseek-ai/dsh-session-persistence-jsonl')
}

let patched: Promise<DshModules> | undefined
let stock: Promise<DshModules> | undefined

/**
 * The patched DSH modules installed in this workspace.
 * @returns the module record.
 */
export function patchedDsh(): Promise<DshModules> {
  return patched ??= (async () => ({
    kind: 'patched' as const,
    cordis: await import('@deepseek-ai/cordis'),
    llm: await import('@deepseek-ai/dsh-llm'),
    session: await import('@deepseek-ai/dsh-session'),
    sessionInvariant: await import('@deepseek-ai/dsh-session/invariant'),
    systemPrompt: await import('@deepseek-ai/dsh-system-prompt'),
    tools: await import('@deepseek-ai/dsh-tools'),
    agent: await import('@deepseek-ai/dsh-agent'),
    agentLoop: await import('@deepseek-ai/dsh-agent-loop'),
    agentLoopInvariant: await import('@deepseek-ai/dsh-agent-loop/invariant'),
    invariants: await import('@deepseek-ai/dsh-invariants'),
    tokenMeter: await import('@deepseek-ai/dsh-token-meter'),
    compaction: await import('@deepseek-ai/dsh-compaction'),
    compactionBasic: await import('@deepseek-ai/dsh-compaction-basic'),
    persistenceJsonl: await import('@deepseek-ai/dsh-session-persistence-jsonl'),
  }))()
}

/** The workspace's `stock/` entry, which re-exports the unmodified npm packages. */
const STOCK_ENTRY = fileURLToPath(new URL('../../../stock/index.mjs', import.meta.url))

/**
 * The unmodified npm rc.8 modules installed under `stock/` by the workspace set-up.
 * @returns the module record.
 * @throws {Error} when `stock/node_modules` is missing.
 */
export function stockDsh(): Promise<DshModules> {
  return stock ??= (async () => {
    if (!existsSync(fileURLToPath(new URL('../../../stock/node_modules', import.meta.url)))) {
      throw new Error('stock DSH is not installed: run the workspace set-up (scripts/toolchain.sh) first')
    }
    const record = await import(pathToFileURL(STOCK_ENTRY).href) as Omit<DshModules, 'kind'>
    return { ...record, kind: 'stock' as const }
  })()
}
