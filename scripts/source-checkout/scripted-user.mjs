// The user of a multi-turn headless run. DSH's headless profile submits one task per process and has no resume
// flag, so this row plays the user for the rest of the session: when a turn reaches its stop boundary
// (`agent/turn-stopping`) it queues the next line as a follow-up ("Turn N: <line>", cycling through `lines`) until
// `turns` turns have run. A follow-up waits in the inbox for the next turn, so the agent never goes idle in between
// and the headless runner, which waits for idle, persists the whole session and prints the last turn's answer.
import z from '@deepseek-ai/schemastery'
import { createUserMessage } from '@deepseek-ai/dsh-llm'

export const name = 'scripted-user'

export const Config = z.object({
  turns: z.natural().min(1).required().description('Turns in the session, the headless task being turn 1.'),
  lines: z.array(z.string()).min(1).required().description('Follow-up lines, cycled.'),
})

export function apply(ctx, config) {
  ctx.on('agent/created', ({ agent }) => {
    const queued = new Set()
    agent.ctx.on('agent/turn-stopping', ({ turn }) => {
      if (turn >= config.turns || queued.has(turn)) return
      queued.add(turn)
      const line = config.lines[(turn - 1) % config.lines.length]
      agent.followup(createUserMessage({ content: [{ type: 'text', text: `Turn ${turn + 1}: ${line}` }], source: { kind: 'user' } }))
    })
  })
}
