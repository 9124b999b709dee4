/**
 * The one lexical scorer of AgentTavern: history search, memory search, lore triggers and the managed policy's
 * relevance rank all call {@link terms} and {@link relevance}. Words come from `Intl.Segmenter`; runs of CJK
 * characters also yield their character bigrams (a lone Han character between kana yields itself), so Chinese and
 * Japanese text matches even where the segmenter cuts a query and a text differently.
 * @module @dsh-seam/agent-tavern/lexical
 */

const STOPWORDS = new Set([
  'about', 'after', 'again', 'all', 'also', 'and', 'any', 'are', 'ask', 'asked', 'back', 'been', 'before', 'but',
  'can', 'could', 'did', 'does', 'down', 'for', 'from', 'gave', 'get', 'give', 'had', 'has', 'have', 'her', 'here',
  'him', 'his', 'how', 'into', 'its', 'just', 'know', 'long', 'many', 'may', 'more', 'much', 'must', 'not', 'now',
  'off', 'once', 'one', 'only', 'other', 'our', 'out', 'over', 'remember', 'said', 'say', 'she', 'should', 'some',
  'still', 'tell', 'than', 'that', 'the', 'their', 'them', 'then', 'there', 'these', 'they', 'this', 'those', 'told',
  'too', 'under', 'very', 'was', 'way', 'were', 'what', 'when', 'where', 'which', 'while', 'who', 'why', 'will',
  'with', 'would', 'yes', 'yet', 'you', 'your',
  // Chinese and Japanese function words and question words the segmenter returns whole.
  '什么', '哪里', '哪儿', '哪个', '怎么', '为什么', '记得', '还记得', '记住', '我们', '你们', '他们', '她们', '一个',
  '这个', '那个', '这些', '那些', '就是', '没有', '可以', '知道', '告诉', '自己', '已经', '时候', '吗', '呢',
  'これ', 'それ', 'あれ', 'この', 'その', 'あの', 'ここ', 'そこ', 'どこ', 'なに', 'なん', 'です', 'ます', 'でした',
  'ました', 'こと', 'もの', 'ため', 'など', 'から', 'まで', '覚え', 'いる', 'ある', 'して', 'した',
])

/**
 * Characters that make a bigram grammatical rather than topical (particles, pronouns, copulas): a bigram holding one
 * is skipped.
 */
const CJK_FUNCTION_CHARS = new Set('的了吗呢吧啊是在把被就还也都和与个你我他她它们这那么有着过给')

const CJK = /[\p{Script=Han}\p{Script=Katakana}\p{Script=Hangul}]/u
const CJK_RUN = /[\p{Script=Han}\p{Script=Katakana}\p{Script=Hangul}ー]+/gu
const HAN = /^\p{Script=Han}$/u
const KANA = /^[\p{Script=Hiragana}\p{Script=Katakana}ー]+$/u
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' })
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/** A grapheme that is a term on its own: an emoji or another pictographic, currency or other symbol. */
const SYMBOL = /[\p{Extended_Pictographic}\p{So}\p{Sc}]/u
/** Emoji variation selectors and skin-tone modifiers: `❤️` and `❤`, `👍🏽` and `👍` are one term. */
const SYMBOL_VARIANTS = /\uFE0E|\uFE0F|\p{Emoji_Modifier}/gu

function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word
}

/** Whether a segmenter word is a term on its own. */
function isTermWord(word: string): boolean {
  if (STOPWORDS.has(word) || !LETTER_OR_DIGIT.test(word)) return false
  if (CJK.test(word) || KANA.test(word)) return word.length >= 2 && !Array.from(word).every(char => CJK_FUNCTION_CHARS.has(char))
  return word.length >= 3 || /^\p{N}+$/u.test(word)
}

/** Character bigrams of a CJK run; a run of one Han character yields that character. */
function cjkGrams(run: string, add: (term: string) => void): void {
  const chars = Array.from(run)
  if (chars.length === 1) {
    if (HAN.test(run) && !CJK_FUNCTION_CHARS.has(run)) add(run)
    return
  }
  for (let i = 0; i + 1 < chars.length; i++) {
    const a = chars[i] as string
    const b = chars[i + 1] as string
    if (!CJK_FUNCTION_CHARS.has(a) && !CJK_FUNCTION_CHARS.has(b) && !STOPWORDS.has(a + b)) add(a + b)
  }
}

/**
 * The content terms of a text in any script: NFKC-normalized, lower-cased `Intl.Segmenter` words (Latin words of three
 * or more characters minus English stopwords with a plural `s` removed, numbers, CJK and kana words of two or more
 * characters minus common function words), every emoji or other symbol (one grapheme each, variation selectors and
 * skin tones dropped), plus the character bigrams of every CJK run (minus the same function words and any bigram
 * holding a particle or pronoun).
 * @param text - any text.
 * @returns the distinct terms, in first-occurrence order.
 */
export function terms(text: string): string[] {
  const normalized = text.normalize('NFKC').toLowerCase()
  const seen = new Set<string>()
  const add = (term: string): void => { seen.add(term) }
  for (const { segment, isWordLike } of segmenter.segment(normalized)) {
    if (isWordLike === true) {
      if (isTermWord(segment)) add(CJK.test(segment) || KANA.test(segment) ? segment : stem(segment))
    } else if (SYMBOL.test(segment)) {
      for (const { segment: grapheme } of graphemes.segment(segment)) if (SYMBOL.test(grapheme)) add(grapheme.replace(SYMBOL_VARIANTS, ''))
    }
  }
  for (const [run] of normalized.matchAll(CJK_RUN)) cjkGrams(run, add)
  return [...seen]
}

/**
 * The share of a query's terms that a text contains: the one relevance score of AgentTavern.
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
