/**
 * Deterministic lexical matching shared by the selection policy and the history and memory tools: terms of a text,
 * the share of a query's terms a text contains, and a snippet around the first match.
 * @module @dsh-context/agent-tavern/lexical
 */

const STOPWORDS = new Set([
  'about', 'after', 'again', 'all', 'also', 'and', 'any', 'are', 'ask', 'asked', 'back', 'been', 'before', 'but',
  'can', 'could', 'did', 'does', 'down', 'for', 'from', 'gave', 'get', 'give', 'had', 'has', 'have', 'her', 'here',
  'him', 'his', 'how', 'into', 'its', 'just', 'know', 'long', 'many', 'may', 'more', 'much', 'must', 'not', 'now',
  'off', 'once', 'one', 'only', 'other', 'our', 'out', 'over', 'remember', 'said', 'say', 'she', 'should', 'some',
  'still', 'tell', 'than', 'that', 'the', 'their', 'them', 'then', 'there', 'these', 'they', 'this', 'those', 'told',
  'too', 'under', 'very', 'was', 'way', 'were', 'what', 'when', 'where', 'which', 'while', 'who', 'why', 'will',
  'with', 'would', 'yes', 'yet', 'you', 'your',
])

function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word
}

/**
 * The content terms of a text: lower-cased letter/digit runs of three or more characters, minus English stopwords,
 * with a plural `s` removed.
 * @param text - any text.
 * @returns the distinct terms, in first-occurrence order.
 */
export function terms(text: string): string[] {
  const seen = new Set<string>()
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length < 3 || STOPWORDS.has(raw)) continue
    seen.add(stem(raw))
  }
  return [...seen]
}

/**
 * The share of a query's terms that a text contains.
 * @param queryTerms - distinct terms of the query ({@link terms}).
 * @param textTerms - terms of the text, as a set.
 * @returns a value in [0, 1]; 0 for an empty query.
 */
export function relevance(queryTerms: readonly string[], textTerms: ReadonlySet<string>): number {
  if (queryTerms.length === 0) return 0
  let hits = 0
  for (const term of queryTerms) if (textTerms.has(term)) hits++
  return hits / queryTerms.length
}

/**
 * A window of a text around the first occurrence of any query term, whole when the text is short enough.
 * @param text - the text to cut.
 * @param queryTerms - terms to look for.
 * @param chars - the window's length in characters.
 * @returns the window, with `…` marking each cut side.
 */
export function snippet(text: string, queryTerms: readonly string[], chars: number): string {
  if (text.length <= chars) return text
  const lower = text.toLowerCase()
  const first = Math.min(...queryTerms.map(term => lower.indexOf(term)).filter(at => at >= 0), text.length)
  const start = first === text.length ? 0 : Math.max(0, Math.min(first - Math.floor(chars / 3), text.length - chars))
  const end = start + chars
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`
}
