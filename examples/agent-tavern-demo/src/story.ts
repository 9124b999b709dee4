/**
 * The demo's roleplay script: what the user says at each turn of a session of any length. Early turns plant facts
 * with words found nowhere else in the story; late turns ask about them (recall probes); every `noteEvery` turns the
 * user asks the character to keep a fact, and every `sceneEvery` turns the scene changes. Deterministic in `seed`.
 * @module @dsh-context/agent-tavern/demo/story
 */

/** One user turn. */
export type StoryTurn =
  | { readonly kind: 'narrate'; readonly text: string }
  | { readonly kind: 'plant'; readonly text: string }
  | { readonly kind: 'note'; readonly text: string; readonly note: string }
  | { readonly kind: 'scene'; readonly text: string; readonly scene: string }
  | { readonly kind: 'probe'; readonly text: string; readonly plantTurn: number; readonly expect: string }

/** A fact planted early and asked about late. */
interface Plant {
  readonly turn: number
  readonly text: string
  readonly question: string
  /** The words a correct answer contains. */
  readonly expect: string
}

const PLANTS: readonly Plant[] = [
  { turn: 4, text: 'I press a brass key into your palm. It is stamped with the number 417 and opens the lighthouse cellar.', question: 'Mira, do you remember the brass key I pressed into your palm? What number was stamped on it?', expect: '417' },
  { turn: 11, text: 'I tell you about my sister Ilsabet, who vanished near the salt mill three winters ago.', question: 'Do you remember what I told you about my sister, the one who vanished near the salt mill? What was her name?', expect: 'Ilsabet' },
  { turn: 19, text: 'I pay my fare with a green glass coin minted in Korrin.', question: 'Do you remember the green glass coin I paid my fare with? Where was it minted?', expect: 'Korrin' },
  { turn: 27, text: 'I whisper the password of the north gate: thistle and tide.', question: 'Do you remember the password of the north gate I whispered to you?', expect: 'thistle and tide' },
  { turn: 35, text: 'I carve a date into your mast with my knife: the ninth of Frostmere.', question: 'Do you remember the date I carved into your mast with my knife?', expect: 'Frostmere' },
  { turn: 42, text: 'I mention that the old cartographer Benedek owes us twelve crowns.', question: 'Do you remember the old cartographer who owes us twelve crowns? What is his name?', expect: 'Benedek' },
]

const PLACES = ['reed bank', 'heron pool', 'fog line', 'lantern quay', 'willow ford', 'eel traps', 'ferry chain', 'dune path', 'boathouse', 'rope walk', 'net sheds', 'cockle flats']
const ACTIONS = ['wade toward', 'point at', 'row past', 'study', 'call out across', 'walk along', 'sketch', 'listen at', 'lean over', 'wait beside']
const DETAILS = [
  'asking what the fishermen say about it',
  'wondering aloud whether the weather will turn',
  'humming an old boat song',
  'keeping my cloak tight against the wind',
  'counting the gulls that circle overhead',
  'asking how long you have worked this crossing',
  'trying to read the faded signs',
  'offering you some dried apple',
]
const NOTES = [
  'the lantern quay closes at the third bell',
  'the willow ford is only passable at low water',
  'the boathouse keeper trades rope for news',
  'fog on the heron pool means a storm by nightfall',
  'the dune path is watched by the reeve\'s men',
  'the eel traps belong to the widow Marl',
  'the ferry chain was last greased in spring',
  'cockle pickers leave the flats before dusk',
  'the rope walk pays travelers to haul hemp',
  'the net sheds shelter smugglers after dark',
  'the reed bank hides a flat-bottomed skiff',
  'gulls over the fog line mean fish below',
]
const SCENES = [
  'the ferry crossing of the Grey Estuary at dawn',
  'the reed maze on the eastern shore, late morning',
  'the fishing village of Hallow Staithe at market hour',
  'the abandoned boathouse on the cockle flats, in the rain',
  'the cliff stair below the lighthouse, at dusk',
  'the estuary mouth under a full moon',
]

/** A 32-bit deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)] as T
}

/** How a story is laid out. */
export interface StoryOptions {
  readonly turns: number
  readonly seed?: number
  /** A note turn every this many turns (default 25). */
  readonly noteEvery?: number
  /** A scene change every this many turns (default 60). */
  readonly sceneEvery?: number
}

/**
 * The user's turns of a story.
 * @param options - length, seed and cadence.
 * @returns `turns` user turns; turn `t` is at index `t - 1`.
 */
export function story(options: StoryOptions): StoryTurn[] {
  const { turns, seed = 7, noteEvery = 25, sceneEvery = 60 } = options
  const next = random(seed)
  const plants = PLANTS.filter(plant => plant.turn <= turns * 0.3)
  const probeAt = new Map<number, Plant>()
  plants.forEach((plant, i) => probeAt.set(Math.round(turns / 2 + (i + 1) * (turns / 2) / plants.length), plant))
  const plantAt = new Map(plants.map(plant => [plant.turn, plant]))
  const out: StoryTurn[] = []
  for (let turn = 1; turn <= turns; turn++) {
    const plant = plantAt.get(turn)
    const probe = probeAt.get(turn)
    if (plant !== undefined) out.push({ kind: 'plant', text: plant.text })
    else if (probe !== undefined) out.push({ kind: 'probe', text: probe.question, plantTurn: probe.turn, expect: probe.expect })
    else if (turn % sceneEvery === 0) {
      const scene = SCENES[(turn / sceneEvery) % SCENES.length] as string
      out.push({ kind: 'scene', text: `(The scene changes: ${scene}.)`, scene })
    } else out.push(turn % noteEvery === 0 ? noteTurn(turn / noteEvery) : narrateTurn(next))
  }
  return out
}

function noteTurn(index: number): StoryTurn {
  const note = NOTES[index % NOTES.length] as string
  return { kind: 'note', text: `Keep this in mind: ${note}.`, note }
}

function narrateTurn(next: () => number): StoryTurn {
  return { kind: 'narrate', text: `I ${pick(next, ACTIONS)} the ${pick(next, PLACES)}, ${pick(next, DETAILS)}.` }
}

/**
 * A short story for a live provider: the first fact planted on turn 2, a note every 4 turns, narration, and the
 * fact's recall probe on the last turn.
 * @param options - length (at least 4 turns) and seed; the cadences are fixed.
 * @returns `turns` user turns.
 * @throws {RangeError} for fewer than 4 turns.
 */
export function shortStory(options: Pick<StoryOptions, 'turns' | 'seed'>): StoryTurn[] {
  const { turns, seed = 7 } = options
  if (!Number.isSafeInteger(turns) || turns < 4) throw new RangeError(`a short story needs at least 4 turns, got ${turns}`)
  const next = random(seed)
  const plant = PLANTS[0] as Plant
  return Array.from({ length: turns }, (_, i): StoryTurn => {
    const turn = i + 1
    if (turn === 2) return { kind: 'plant', text: plant.text }
    if (turn === turns) return { kind: 'probe', text: plant.question, plantTurn: 2, expect: plant.expect }
    return turn % 4 === 0 ? noteTurn(turn / 4) : narrateTurn(next)
  })
}

/** The opening scene of every story. */
export const OPENING_SCENE = SCENES[0] as string

