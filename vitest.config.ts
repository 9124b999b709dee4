import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['packages/*/tests/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    server: {
      deps: {
        // Built workspace packages load natively, as the patched DSH packages import them: one module instance.
        external: [/\/packages\/[^/]+\/lib\//],
      },
    },
  },
})
