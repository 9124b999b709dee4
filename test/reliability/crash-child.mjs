// Child process of crash.test.ts (plain Node over the built packages): runs a JSONL-persisted session with a
// keep-last listener for `turns` turns, then sends one more prompt whose request the model never answers. When that
// request reaches the model it reports the session file and the number of events logged, and waits to be killed.
// Usage: node crash-child.mjs <persist root> <session id> <turns>
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh, scriptedAdapter, sessionLogPath } from '@dsh-seam/loop-testkit'

const [root, id, turns] = process.argv.slice(2)
const dsh = await patchedDsh()
const loop = await bootLoop(dsh, { persistRoot: root })
const answers = scriptedAdapter(dsh, { fallback: conversationReply() })
let hang = false
class HangingModel extends dsh.llm.LlmAdapter {
  resolveModel(provider, model) { return answers.resolveModel(provider, model) }
  async * stream(request) {
    if (hang) {
      process.send({ path: sessionLogPath(loop, agent), events: agent.session.events.length })
      await new Promise(() => { setInterval(() => {}, 1000) }) // the timer keeps the process alive until the kill
    }
    yield * answers.stream(request)
  }
}
loop.ctx.llm.registerAdapter(['hanging'], new HangingModel())
const agent = loop.ctx.agentLoop.create(dsh.session.SessionId(id), { provider: 'hanging', model: 'fake-model' })
agent.ctx.on('agent/context', keepLastNodes(4))
for (let turn = 1; turn <= Number(turns); turn++) await loop.say(agent, conversationTurn(turn))
if (loop.errors.length > 0) throw loop.errors[0].error
hang = true
agent.followup(loop.user(conversationTurn(Number(turns) + 1)))
