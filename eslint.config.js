// Lint: typescript-eslint's recommended rules, and the layers of docs/design.md as import boundaries.
// Formatting is Prettier's (.prettierrc.json); eslint-config-prettier turns off the rules it owns.
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

/** Imports that mean I/O or a framework: never in the pure layers. */
const IO_MODULES = [
  'node:*',
  'pg',
  'pg-*',
  'pino',
  'fastify',
  'fastify-*',
  '@fastify/*',
  '@electric-sql/*',
  'prom-client',
  'openapi-fetch',
  'undici',
]

/** A layer may not import the folders named here (relative imports, matched on the path). */
function layer(files, forbiddenFolders, forbiddenModules = [], message) {
  return {
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...forbiddenFolders.map((folder) => ({
              group: [`**/${folder}/*`, `**/${folder}/**`],
              message: `${message} (docs/design.md, "Rooms").`,
            })),
            ...(forbiddenModules.length > 0
              ? [
                  {
                    group: forbiddenModules,
                    message: `${message}: no I/O or framework here (docs/design.md, "Rooms").`,
                  },
                ]
              : []),
          ],
        },
      ],
    },
  }
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'data/',
      'datasets/',
      'openapi/',
      'packages/*/dist/',
      'packages/client/src/generated/',
      'web/vendor/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
      'prefer-const': 'error',
    },
  },
  layer(
    ['src/math/**'],
    ['core', 'store', 'domain', 'http', 'ops', 'sim', 'client'],
    IO_MODULES,
    'math is pure and imports nothing of ours',
  ),
  layer(
    ['src/core/**'],
    ['store', 'domain', 'http', 'ops', 'sim', 'client'],
    IO_MODULES,
    'core is pure: it imports math and core only',
  ),
  layer(['src/store/**'], ['domain', 'http', 'ops', 'sim', 'client'], [], 'store imports math and core only'),
  layer(
    ['src/domain/**'],
    ['http', 'ops', 'sim', 'client'],
    [],
    'domain (use cases) imports core, math and store only',
  ),
  layer(['src/ops/**'], ['http', 'sim', 'client'], [], 'ops reads through domain and store'),
  layer(['src/http/**'], ['store', 'sim', 'client'], [], 'http calls use cases in domain, never the store'),
  layer(
    ['src/sim/**'],
    ['store', 'domain', 'http', 'ops'],
    ['pg', 'pg-*', 'fastify', 'fastify-*', '@fastify/*', '@electric-sql/*'],
    'the simulator runs the pure core only',
  ),
  {
    files: ['web/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        location: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        Intl: 'readonly',
        navigator: 'readonly',
        history: 'readonly',
        localStorage: 'readonly',
        requestAnimationFrame: 'readonly',
        ResizeObserver: 'readonly',
        uPlot: 'readonly',
        Node: 'readonly',
        devicePixelRatio: 'readonly',
      },
    },
  },
  {
    files: ['**/*.mjs', 'scripts/**', 'eslint.config.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  prettier,
)
