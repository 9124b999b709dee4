// The offline model of the consumer smoke test's apps (patched-app.mjs, and the README's example, which imports it as
// ./my-model.js): a DSH LlmAdapter that keeps every request it receives and, every third turn, calls `lookup` once
// before answering.
import { LlmAdapter } from '@deepseek-ai/dsh-llm'

export class MyModel extends LlmAdapter {
  requests = []

  resolveModel(provider, id) {
    return Promise.resolve({ provider, id, name: id, context: { contextWindow: 64_000 } })
  }

  async * stream(request) {
    this.requests.push(request)
    const last = request.messages.at(-1)
    const asked = last.content.find(block => block.type === 'text')?.text ?? ''
    const call = last.role === 'user' && Number(/turn (\d+)/.exec(asked)?.[1]) % 3 === 0
    const text = call ? 'Looking it up.' : `Reply to "${asked}".`
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'block-end', index: 0, block: { type: 'text', text } }
    if (call) {
      yield { type: 'block-start', index: 1, blockType: 'tool-call' }
      yield { type: 'block-end', index: 1, block: { type: 'tool-call', id: `call-${this.requests.length}`, name: 'lookup', arguments: JSON.stringify({ topic: asked }) } }
    }
    yield { type: 'finish', reason: { kind: call ? 'tool-calls' : 'stop' } }
  }
}
