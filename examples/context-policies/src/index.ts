/**
 * Example `agent/context` policy modules, each a module `dsh-seam simulate --policy` loads (`lib/<name>.js`):
 * keep the last turns, keep the newest turns within a token budget, and AgentTavern's managed policy with the demo's
 * recall probes.
 * @module @dsh-seam/context-policies
 */

export * as agentTavern from './agent-tavern.ts'
export * as keepLastTurns from './keep-last-turns.ts'
export * as tokenBudget from './token-budget.ts'
