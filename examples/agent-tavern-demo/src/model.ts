/**
 * The demo's embedded model: a deterministic function of each request that plays Mira in character, in the language
 * the user writes. It reads only the request, and answers its newest message that is not plugin context: asked to
 * remember, it calls `tavern_history_search` with the question and then answers from the hits the tool returned (so
 * an answer can only come from the log); asked to keep a fact or told of a scene change, it calls `memory_write`;
 * asked for a compaction summary, it writes one; otherwise it narrates. Every reply reports provider usage from
 * {@link providerTokens}, a stand-in tokenizer that, like real ones, spends far more tokens per CJK character than
 * the DSH meter's 4 characters per token.
 * @module @dsh-seam/agent-tavern-demo/model
 */

import type { GenerateOptions, Message, StreamChunk } from '@deepseek-ai/dsh-llm'
import type { HistorySearch } from '@dsh-seam/agent-tavern'
import { contentText, TOOL_NAMES } from '@dsh-seam/agent-tavern'
import { textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import type { StoryLanguage } from './story.ts'
import { storyPlaces } from './story.ts'

/** The marker of DSH compaction-basic's summarization request. */
const SUMMARY_MARKER = 'acting as a compaction engine'

const SENTENCES: Record<StoryLanguage, readonly string[]> = {
  en: [
    'Mira leans on her pole and squints toward the {place}, reading the water the way other folk read letters.',
    '"Quiet water keeps its own counsel," she says, "and the {place} has kept more than most."',
    'She shifts her weight as the ferry rocks, one boot braced against the worn gunwale.',
    'A gull drops onto the prow, considers you with a yellow eye, and flaps away unimpressed.',
    '"My father poled this crossing forty years, and he never once trusted a calm morning," she mutters.',
    'Mira pulls her oilskin tighter; the wind off the estuary smells of weed and wet rope.',
    '"Mind your feet, traveler. The planks are slick and the river does not give back what it takes."',
    'She hums a few bars of a rowing song, then stops, as if the words belonged to someone else.',
    'The pole finds the bottom with a soft thud, and the ferry slides on through the grey.',
    '"Folk out here talk slow and remember long," she says, glancing at you sidelong.',
    'Far off, a bell sounds from the village, thin and patient across the flats.',
    'Mira smiles, just barely, the way someone smiles who has decided to like you but will not admit it yet.',
    '"If the weather holds we will make the far bank before the light goes," she promises.',
    'She points with her chin toward the {place}. "There. Watch the eddies and you will see what I mean."',
    'The current tugs at the hull like an impatient child, and she answers it with a long steady push.',
    'Water drips from the pole in bright beads that vanish into the brown water.',
  ],
  zh: [
    '米拉倚着撑篙，眯眼望向{place}，读水的样子就像别人读信。',
    '“静水自有主张，”她说，“{place}藏住的东西比哪儿都多。”',
    '渡船一晃，她换了换重心，一只靴子抵住磨旧的船舷。',
    '一只海鸥落在船头，用黄眼睛打量你一番，又不以为然地飞走了。',
    '“我父亲在这条渡线上撑了四十年船，从来不信风平浪静的早晨，”她嘟囔道。',
    '米拉把油布雨衣裹得更紧；河口吹来的风带着水草和湿绳子的气味。',
    '“当心脚下，客人。木板滑，河水拿走的东西从不还回来。”',
    '她哼了几小节划船歌，又停下，好像那些词属于别人。',
    '撑篙轻轻一声触到河底，渡船继续滑进灰蒙蒙的水面。',
    '“这儿的人说话慢，记性长，”她斜睨了你一眼。',
    '远处村里传来钟声，细细的，耐心地越过滩涂。',
    '米拉微微一笑，像是已经决定喜欢你，却还不肯承认。',
    '“天气要是撑得住，天黑前我们就能到对岸，”她许诺道。',
    '她用下巴朝{place}一指。“那儿。看那些漩涡，你就明白我的意思了。”',
    '水流像个不耐烦的孩子拽着船身，她用一记长长的、稳稳的撑篙回应它。',
    '水珠从撑篙上滴落，亮晶晶的，转眼消失在褐色的河水里。',
  ],
}

const PHRASES = {
  en: {
    summary: 'Checkpoint: Mira, ferrywoman of the Grey Estuary, has been carrying the traveler from shore to shore; the story so far is kept whole in the session log.',
    forgotten: 'Mira frowns and shakes her head. "No, traveler. If you told me that, the river has taken it."',
    remembered: (turn: number, snippet: string) => `Mira is quiet for a long moment, then nods slowly. "I remember. It was back at turn ${turn}: ${snippet}" She taps the pole twice against the hull, as if to fix it in place.`,
    kept: 'Mira nods and ties a small knot in the cord at her wrist, the way she marks anything worth keeping.',
    searching: 'Mira searches her memory.',
    keeping: 'Mira commits it to memory.',
    sceneTaken: 'Mira takes in the new scene.',
    place: 'water',
  },
  zh: {
    summary: '检查点：灰色河口的摆渡女米拉一直载着旅人往返两岸；迄今的故事完整保存在会话日志里。',
    forgotten: '米拉皱起眉头，摇了摇头。“不，客人。就算你跟我说过，也被河水带走了。”',
    remembered: (turn: number, snippet: string) => `米拉沉默了好一会儿，然后缓缓点头。“我记得。那是第${turn}轮的事：${snippet}”她用撑篙在船身上敲了两下，像是要把它钉牢。`,
    kept: '米拉点点头，在腕上的绳子上打了个小结，她总这样记下值得记住的事。',
    searching: '米拉在记忆里搜寻。',
    keeping: '米拉把它记在心里。',
    sceneTaken: '米拉打量着新的场景。',
    place: '河面',
  },
} as const

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u

/** The language a user wrote in. */
function languageOf(text: string): StoryLanguage {
  return CJK.test(text) ? 'zh' : 'en'
}

/**
 * The demo provider's prompt tokens for a text: 0.75 per CJK character and one per 3.6 other characters, a stand-in
 * for a BPE tokenizer (not DeepSeek's), deterministic so the demo is reproducible.
 * @param text - any text.
 * @returns its tokens.
 */
function providerTokens(text: string): number {
  let cjk = 0
  for (const char of text) if (CJK.test(char)) cjk++
  return Math.ceil(cjk * 0.75 + (text.length - cjk) / 3.6)
}

/** The usage the demo provider reports for a request: its whole prompt through {@link providerTokens}, 3 tokens framing each message. */
function requestUsage(request: GenerateOptions, output: number): { inputTokens: number; outputTokens: number } {
  let input = providerTokens(request.system ?? '') + providerTokens(JSON.stringify(request.tools ?? []))
  for (const message of request.messages) input += providerTokens(contentText(message.content)) + 3
  return { inputTokens: input, outputTokens: output }
}

/** Deterministic 32-bit hash (FNV-1a) of a text. */
function hash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

function textOf(message: Message | undefined): string {
  return message === undefined ? '' : contentText(message.content.filter(block => block.type === 'text'))
}

/** Eight to twelve in-character sentences, chosen by the user's words so both modes narrate alike. */
function narrate(said: string, lang: StoryLanguage): string {
  let h = hash(said)
  const place = storyPlaces(lang).find(name => said.includes(name)) ?? PHRASES[lang].place
  const sentences = SENTENCES[lang]
  const count = 8 + (h % 5)
  const lines: string[] = []
  for (let i = 0; i < count; i++) {
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0
    lines.push((sentences[h % sentences.length] as string).replace('{place}', place))
  }
  return lines.join(lang === 'zh' ? '' : ' ')
}

function answerFrom(resultText: string, lang: StoryLanguage): string {
  const best = (JSON.parse(resultText) as HistorySearch).hits[0]
  return best === undefined ? PHRASES[lang].forgotten : PHRASES[lang].remembered(best.turn, best.snippet)
}

/** The tool call a tool result answers, found in the assistant message before it. */
function calledTool(messages: readonly Message[], callId: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    for (const block of (messages[i] as Message).content) {
      if (block.type === 'tool-call' && block.id === callId) return block.name
    }
  }
  return undefined
}

const REMEMBER = /\bdo you remember\b|还记得/i
const NOTE = /^(?:Keep this in mind: (.*)\.|请记住：(.*)。)$/
const SCENE = /^(?:\(The scene changes: (.*)\.\)|（场景转换：(.*)。）)$/

/**
 * Mira's reply to one request, with the provider usage of the request.
 * @param request - the request as the adapter received it.
 * @param index - its index among the adapter's requests, for call ids.
 * @returns the reply's stream chunks.
 */
export function roleplayReply(request: GenerateOptions, index: number): StreamChunk[] {
  const chunks = reply(request, index)
  const output = providerTokens(JSON.stringify(chunks.filter(chunk => chunk.type === 'block-end')))
  const finish = chunks.findIndex(chunk => chunk.type === 'finish')
  return [...chunks.slice(0, finish), { type: 'usage', usage: requestUsage(request, output) }, ...chunks.slice(finish)]
}

function reply(request: GenerateOptions, index: number): StreamChunk[] {
  const { messages } = request
  const last = messages.at(-1)
  const said = textOf(messages.findLast(message => message.role === 'user' && message.source.kind === 'user'))
  const lang = languageOf(said)
  const phrases = PHRASES[lang]
  if (textOf(last).includes(SUMMARY_MARKER)) return textReply(phrases.summary)
  const answered = messages.findLast(message => message.source.kind !== 'plugin')
  const result = answered?.content.find(block => block.type === 'tool-result')
  if (result !== undefined) {
    const tool = calledTool(messages, result.toolCallId)
    if (tool === TOOL_NAMES.historySearch) return textReply(answerFrom(contentText(result.content), lang))
    return textReply(phrases.kept)
  }
  const id = `call-${index + 1}`
  if (REMEMBER.test(said)) return toolCallReply([{ id, name: TOOL_NAMES.historySearch, args: { query: said } }], phrases.searching)
  const note = NOTE.exec(said)
  if (note !== null) return toolCallReply([{ id, name: TOOL_NAMES.memoryWrite, args: { text: note[1] ?? note[2], tags: ['fact'], importance: 0.7 } }], phrases.keeping)
  const scene = SCENE.exec(said)
  if (scene !== null) return toolCallReply([{ id, name: TOOL_NAMES.memoryWrite, args: { text: scene[1] ?? scene[2], tags: ['scene'], importance: 0.6 } }], phrases.sceneTaken)
  return textReply(narrate(said, lang))
}
