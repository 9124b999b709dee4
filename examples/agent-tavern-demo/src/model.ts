/**
 * The demo's embedded model: a deterministic function of each request that plays Mira in character. It reads only
 * the request, and answers its newest message that is not a plugin context snapshot: asked to remember, it calls `tavern_history_search` with the question's terms and then answers from
 * the hits the tool returned (so an answer can only come from the log); asked to keep a fact or told of a scene
 * change, it calls `memory_write`; asked for a compaction summary, it writes one; otherwise it narrates.
 * @module @dsh-context/agent-tavern/demo/model
 */

import type { GenerateOptions, Message, StreamChunk } from '@deepseek-ai/dsh-llm'
import { textReply, toolCallReply } from '@dsh-context/loop-testkit'
import { terms } from '../lexical.ts'
import type { HistoryHit } from '../log.ts'
import { contentText } from '../log.ts'
import { TOOL_NAMES } from '../tools.ts'

/** The marker of DSH compaction-basic's summarization request. */
const SUMMARY_MARKER = 'acting as a compaction engine'

const SENTENCES = [
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
]

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
function narrate(said: string): string {
  let h = hash(said)
  const place = /the ([a-z]+ [a-z]+),/.exec(said)?.[1] ?? 'water'
  const count = 8 + (h % 5)
  const lines: string[] = []
  for (let i = 0; i < count; i++) {
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0
    lines.push((SENTENCES[h % SENTENCES.length] as string).replace('{place}', place))
  }
  return lines.join(' ')
}

function answerFrom(resultText: string): string {
  const hits = (JSON.parse(resultText) as { hits: HistoryHit[] }).hits
  const best = hits[0]
  if (best === undefined) return 'Mira frowns and shakes her head. "No, traveler. If you told me that, the river has taken it."'
  return `Mira is quiet for a long moment, then nods slowly. "I remember. It was back at turn ${best.turn}: ${best.snippet}" She taps the pole twice against the hull, as if to fix it in place.`
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

/**
 * Mira's reply to one request.
 * @param request - the request as the adapter received it.
 * @param index - its index among the adapter's requests, for call ids.
 * @returns the reply's stream chunks.
 */
export function roleplayReply(request: GenerateOptions, index: number): StreamChunk[] {
  const { messages } = request
  const last = messages.at(-1)
  if (textOf(last).includes(SUMMARY_MARKER)) {
    return textReply('Checkpoint: Mira, ferrywoman of the Grey Estuary, has been carrying the traveler from shore to shore; the story so far is kept whole in the session log.')
  }
  const answered = messages.findLast(message => message.source.kind !== 'plugin')
  const result = answered?.content.find(block => block.type === 'tool-result')
  if (result !== undefined) {
    const tool = calledTool(messages, result.toolCallId)
    if (tool === TOOL_NAMES.historySearch) return textReply(answerFrom(contentText(result.content)))
    return textReply('Mira nods and ties a small knot in the cord at her wrist, the way she marks anything worth keeping.')
  }
  const said = textOf(messages.findLast(message => message.role === 'user' && message.source.kind === 'user'))
  const id = `call-${index + 1}`
  if (/\bdo you remember\b/i.test(said)) {
    return toolCallReply([{ id, name: TOOL_NAMES.historySearch, args: { query: terms(said).join(' ') } }], 'Mira searches her memory.')
  }
  const note = /^Keep this in mind: (.*)\.$/.exec(said)?.[1]
  if (note !== undefined) return toolCallReply([{ id, name: TOOL_NAMES.memoryWrite, args: { text: note, tags: ['fact'], importance: 0.7 } }], 'Mira commits it to memory.')
  const scene = /^\(The scene changes: (.*)\.\)$/.exec(said)?.[1]
  if (scene !== undefined) return toolCallReply([{ id, name: TOOL_NAMES.memoryWrite, args: { text: scene, tags: ['scene'], importance: 0.6 } }], 'Mira takes in the new scene.')
  return textReply(narrate(said))
}
