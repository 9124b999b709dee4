/**
 * Lore: the world-info entries of the character or preset config (keywords and text, as SillyTavern's world info
 * keeps them). An entry is triggered by a text holding one of its keywords, matched by the one lexical scorer (every
 * term of the keyword in the text); the entries the story so far triggers are preloaded once at activation, and
 * `tavern_lore_search` finds any of them.
 * @module @dsh-seam/agent-tavern/lore
 */

import { relevance, terms } from './lexical.ts'

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
 * The entries a text triggers (the lore preloaded at activation).
 * @param entries - the lore.
 * @param text - the text scanned for keywords.
 * @returns the triggered entries, in config order.
 */
export function loreTriggeredBy(entries: readonly LoreEntry[], text: string): LoreEntry[] {
  const found = new Set(terms(text))
  return entries.filter(entry => triggers(entry, found))
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
