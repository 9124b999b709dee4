/**
 * Lore: the world-info entries of the character or preset config (keywords and text, as SillyTavern's world info
 * keeps them). An entry is triggered while one of its keywords occurs in the recent turns, matched by the one
 * lexical scorer (every term of the keyword in the text), and the triggered entries form the `lore` context.
 * @module @dsh-seam/agent-tavern/lore
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { relevance, terms } from './lexical.ts'
import { transcript } from './log.ts'

/** One world-info entry. */
export interface LoreEntry {
  /** The entry's title, shown with its text. */
  readonly name: string
  /** Words or phrases that trigger it, in any script. */
  readonly keywords: readonly string[]
  readonly text: string
}

/**
 * Whether a text triggers an entry: it holds every term of at least one of the entry's keywords.
 * @param entry - the entry.
 * @param textTerms - terms of the text ({@link terms}).
 * @returns true when a keyword matches.
 */
function triggers(entry: LoreEntry, textTerms: ReadonlySet<string>): boolean {
  return entry.keywords.some(keyword => relevance(terms(keyword), textTerms) === 1)
}

/**
 * The entries the recent turns trigger.
 * @param entries - the lore.
 * @param events - a session log.
 * @param turns - how many of the newest turns are scanned (user messages and replies).
 * @returns the triggered entries, in config order.
 */
export function triggeredLore(entries: readonly LoreEntry[], events: readonly SessionEvent[], turns: number): LoreEntry[] {
  if (entries.length === 0 || turns === 0) return []
  const story = transcript(events)
  const newest = story.at(-1)?.turn ?? 0
  const recent = new Set(terms(story.filter(entry => entry.turn > newest - turns).map(entry => entry.text).join('\n')))
  return entries.filter(entry => triggers(entry, recent))
}

/**
 * The `lore` context text.
 * @param entries - triggered entries.
 * @returns the world-info block, or empty when nothing is triggered.
 */
export function loreContext(entries: readonly LoreEntry[]): string {
  return entries.length === 0 ? '' : `World info:\n${entries.map(entry => `- ${entry.name}: ${entry.text}`).join('\n')}`
}

/**
 * Search the lore by name, keywords and text.
 * @param entries - the lore.
 * @param query - the search text.
 * @param limit - the most hits.
 * @returns matching entries, best first, and how many were searched.
 */
export function searchLore(entries: readonly LoreEntry[], query: string, limit: number): { hits: LoreEntry[]; truncated: boolean; sourceCount: number } {
  const wanted = terms(query)
  const matched = entries
    .map((entry, i) => ({ entry, i, score: relevance(wanted, new Set(terms(`${entry.name}\n${entry.keywords.join('\n')}\n${entry.text}`))) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
  return { hits: matched.slice(0, limit).map(({ entry }) => entry), truncated: matched.length > limit, sourceCount: entries.length }
}
