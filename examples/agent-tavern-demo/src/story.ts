/**
 * The demo's roleplay script: what the user says at each turn of a session of any length. Early turns plant facts
 * with words found nowhere else in the story; late turns ask about them (recall probes); every `noteEvery` turns the
 * user asks the character to keep a fact, and every `sceneEvery` turns the scene changes. In English or Chinese;
 * deterministic in `seed`.
 * @module @dsh-seam/agent-tavern-demo/story
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

/** The language of a story. */
export type StoryLanguage = 'en' | 'zh'

/** Everything a story in one language is made of. */
interface Script {
  readonly plants: readonly Plant[]
  readonly places: readonly string[]
  readonly actions: readonly string[]
  readonly details: readonly string[]
  readonly notes: readonly string[]
  readonly scenes: readonly string[]
  readonly narrate: (action: string, place: string, detail: string) => string
  readonly note: (note: string) => string
  readonly scene: (scene: string) => string
}

const EN: Script = {
  plants: [
    { turn: 4, text: 'I press a brass key into your palm. It is stamped with the number 417 and opens the lighthouse cellar.', question: 'Mira, do you remember the brass key I pressed into your palm? What number was stamped on it?', expect: '417' },
    { turn: 11, text: 'I tell you about my sister Ilsabet, who vanished near the salt mill three winters ago.', question: 'Do you remember what I told you about my sister, the one who vanished near the salt mill? What was her name?', expect: 'Ilsabet' },
    { turn: 19, text: 'I pay my fare with a green glass coin minted in Korrin.', question: 'Do you remember the green glass coin I paid my fare with? Where was it minted?', expect: 'Korrin' },
    { turn: 27, text: 'I whisper the password of the north gate: thistle and tide.', question: 'Do you remember the password of the north gate I whispered to you?', expect: 'thistle and tide' },
    { turn: 35, text: 'I carve a date into your mast with my knife: the ninth of Frostmere.', question: 'Do you remember the date I carved into your mast with my knife?', expect: 'Frostmere' },
    { turn: 42, text: 'I mention that the old cartographer Benedek owes us twelve crowns.', question: 'Do you remember the old cartographer who owes us twelve crowns? What is his name?', expect: 'Benedek' },
  ],
  places: ['reed bank', 'heron pool', 'fog line', 'lantern quay', 'willow ford', 'eel traps', 'ferry chain', 'dune path', 'boathouse', 'rope walk', 'net sheds', 'cockle flats'],
  actions: ['wade toward', 'point at', 'row past', 'study', 'call out across', 'walk along', 'sketch', 'listen at', 'lean over', 'wait beside'],
  details: [
    'asking what the fishermen say about it',
    'wondering aloud whether the weather will turn',
    'humming an old boat song',
    'keeping my cloak tight against the wind',
    'counting the gulls that circle overhead',
    'asking how long you have worked this crossing',
    'trying to read the faded signs',
    'offering you some dried apple',
  ],
  notes: [
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
  ],
  scenes: [
    'the ferry crossing of the Grey Estuary at dawn',
    'the reed maze on the eastern shore, late morning',
    'the fishing village of Hallow Staithe at market hour',
    'the abandoned boathouse on the cockle flats, in the rain',
    'the cliff stair below the lighthouse, at dusk',
    'the estuary mouth under a full moon',
  ],
  narrate: (action, place, detail) => `I ${action} the ${place}, ${detail}.`,
  note: note => `Keep this in mind: ${note}.`,
  scene: scene => `(The scene changes: ${scene}.)`,
}

const ZH: Script = {
  plants: [
    { turn: 4, text: '我把一把黄铜钥匙塞进你的手心。钥匙上刻着数字417，能打开灯塔的地窖。', question: '米拉，你还记得我塞进你手心的那把黄铜钥匙吗？上面刻着什么数字？', expect: '417' },
    { turn: 11, text: '我跟你讲起我的妹妹伊尔莎贝，三年前的冬天她在盐磨坊附近失踪了。', question: '你还记得我跟你讲过的、在盐磨坊附近失踪的妹妹吗？她叫什么名字？', expect: '伊尔莎贝' },
    { turn: 19, text: '我用一枚在科林铸造的绿玻璃硬币付了船费。', question: '你还记得我用来付船费的那枚绿玻璃硬币吗？它是在哪里铸造的？', expect: '科林' },
    { turn: 27, text: '我低声告诉你北门的口令：蓟草与潮汐。', question: '你还记得我悄悄告诉你的北门口令吗？', expect: '蓟草与潮汐' },
    { turn: 35, text: '我用小刀在你的桅杆上刻下一个日子：霜月初九。', question: '你还记得我用小刀刻在你桅杆上的那个日子吗？', expect: '霜月初九' },
    { turn: 42, text: '我提到老制图师贝内德克还欠我们十二个克朗。', question: '你还记得那个欠我们十二个克朗的老制图师吗？他叫什么名字？', expect: '贝内德克' },
  ],
  places: ['芦苇岸', '鹭鸶塘', '雾线', '灯笼码头', '柳树浅滩', '鳗鱼笼', '渡船铁链', '沙丘小路', '船屋', '制绳场', '晒网棚', '蛤蜊滩'],
  actions: ['蹚水走向', '指着', '划船经过', '打量着', '隔着水朝', '沿着', '描画着', '侧耳倾听', '俯身望向', '守在'],
  details: [
    '问渔夫们是怎么说它的',
    '自言自语天气会不会变',
    '哼着一首古老的船歌',
    '把斗篷裹紧挡住风',
    '数着头顶盘旋的海鸥',
    '问你在这条渡线上干了多久',
    '试着辨认褪色的招牌',
    '递给你几片苹果干',
  ],
  notes: [
    '灯笼码头在敲第三遍钟时关闭',
    '柳树浅滩只有退潮时才能通过',
    '船屋的看守用绳子换消息',
    '鹭鸶塘起雾意味着傍晚有风暴',
    '沙丘小路有地方官的人把守',
    '鳗鱼笼属于马尔寡妇',
    '渡船铁链是春天上的油',
    '拾蛤蜊的人黄昏前就离开滩涂',
    '制绳场付钱请旅人拖麻绳',
    '晒网棚天黑后藏着走私贩',
    '芦苇岸下藏着一条平底小船',
    '雾线上空的海鸥说明水下有鱼',
  ],
  scenes: [
    '黎明时分灰色河口的渡口',
    '东岸的芦苇迷宫，上午将尽',
    '集市时分的渔村霍洛斯泰斯',
    '雨中蛤蜊滩上废弃的船屋',
    '黄昏时灯塔下的悬崖石阶',
    '满月下的河口',
  ],
  narrate: (action, place, detail) => `我${action}${place}，${detail}。`,
  note: note => `请记住：${note}。`,
  scene: scene => `（场景转换：${scene}。）`,
}

const SCRIPTS: Record<StoryLanguage, Script> = { en: EN, zh: ZH }

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
  /** The story's language (default `en`). */
  readonly lang?: StoryLanguage
  /** A note turn every this many turns (default 25). */
  readonly noteEvery?: number
  /** A scene change every this many turns (default 60). */
  readonly sceneEvery?: number
}

/**
 * The user's turns of a story.
 * @param options - length, seed, language and cadence.
 * @returns `turns` user turns; turn `t` is at index `t - 1`.
 */
export function story(options: StoryOptions): StoryTurn[] {
  const { turns, seed = 7, lang = 'en', noteEvery = 25, sceneEvery = 60 } = options
  const script = SCRIPTS[lang]
  const next = random(seed)
  const plants = script.plants.filter(plant => plant.turn <= turns * 0.3)
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
      const scene = script.scenes[(turn / sceneEvery) % script.scenes.length] as string
      out.push({ kind: 'scene', text: script.scene(scene), scene })
    } else out.push(turn % noteEvery === 0 ? noteTurn(script, turn / noteEvery) : narrateTurn(script, next))
  }
  return out
}

function noteTurn(script: Script, index: number): StoryTurn {
  const note = script.notes[index % script.notes.length] as string
  return { kind: 'note', text: script.note(note), note }
}

function narrateTurn(script: Script, next: () => number): StoryTurn {
  return { kind: 'narrate', text: script.narrate(pick(next, script.actions), pick(next, script.places), pick(next, script.details)) }
}

/**
 * A short story for a live provider: the first fact planted on turn 2, a note every 4 turns, narration, and the
 * fact's recall probe on the last turn.
 * @param options - length (at least 4 turns), seed and language; the cadences are fixed.
 * @returns `turns` user turns.
 * @throws {RangeError} for fewer than 4 turns.
 */
export function shortStory(options: Pick<StoryOptions, 'turns' | 'seed' | 'lang'>): StoryTurn[] {
  const { turns, seed = 7, lang = 'en' } = options
  if (!Number.isSafeInteger(turns) || turns < 4) throw new RangeError(`a short story needs at least 4 turns, got ${turns}`)
  const script = SCRIPTS[lang]
  const next = random(seed)
  const plant = script.plants[0] as Plant
  return Array.from({ length: turns }, (_, i): StoryTurn => {
    const turn = i + 1
    if (turn === 2) return { kind: 'plant', text: plant.text }
    if (turn === turns) return { kind: 'probe', text: plant.question, plantTurn: 2, expect: plant.expect }
    return turn % 4 === 0 ? noteTurn(script, turn / 4) : narrateTurn(script, next)
  })
}

/**
 * The opening scene of every story in a language.
 * @param lang - the language.
 * @returns the first scene.
 */
export function openingScene(lang: StoryLanguage = 'en'): string {
  return SCRIPTS[lang].scenes[0] as string
}

/** The opening scene of every English story. */
export const OPENING_SCENE = openingScene('en')

/**
 * The places a story's narration names, for the model's in-character replies.
 * @param lang - the language.
 * @returns the place names.
 */
export function storyPlaces(lang: StoryLanguage): readonly string[] {
  return SCRIPTS[lang].places
}
