// Lint: typescript-eslint's type-aware rules over src/, test/ and bench/. The rules kept are those
// that catch bugs no test may notice (a promise left floating in a shutdown path, a switch that
// forgets a kind), and in test/ the suite's rule on waiting; formatting is Prettier's.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'build/**',
      'coverage/**',
      'node_modules/**',
      'bench/tmp/**',
      'bench/results/**',
      'test/support/consumer/**',
      'scripts/**',
      'src/console/assets/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    // A disable comment where its rule no longer fires fails too: an allowance does not outlive what it allowed.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A name starting with `_` is unused on purpose (express's four-argument error handler, `for (const _ in o)`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Passing on a caught value unchanged (it may not be an Error) is not inventing a non-Error reason.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    // Tests and benchmarks read JSON from real processes (typed \`any\` by fetch): the unsafe-any
    // rules would ask for a cast on every line without catching anything; the promise rules stay.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Their fakes and handlers stand in for async implementations: `async` keeps a throw a rejection, as there.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The suite waits for the event it expects, never for the clock, and polls only through
    // waitFor (CONTRIBUTING.md, "Waiting"). The few places where the time is the scenario (a
    // sender's pace, the moment of a kill) turn this rule off on their line and say why:
    // `grep -rn 'disable-next-line no-restricted-syntax' test` lists them.
    files: ['test/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          // await delay(ms) / setTimeout(ms) (node:timers/promises, under its names here), timers.setTimeout(ms), scheduler.wait(ms).
          selector:
            "AwaitExpression > CallExpression:matches([callee.name=/^(delay|sleep|setTimeout)$/], [callee.property.name='setTimeout'], [callee.object.name='scheduler'][callee.property.name='wait'])",
          message: 'An awaited timer: wait for what it stands for with waitFor (test/support/wait-for.ts), or fake the clock.',
        },
        {
          // new Promise((resolve) => setTimeout(resolve, ms)), with or without braces, awaited or kept in a helper.
          selector: [
            "NewExpression[callee.name='Promise'] > :function > CallExpression[arguments.0.type='Identifier']",
            "NewExpression[callee.name='Promise'] > :function > BlockStatement > ExpressionStatement > CallExpression[arguments.0.type='Identifier']",
          ]
            .map((call) => `${call}:matches([callee.name='setTimeout'], [callee.property.name='setTimeout'])`)
            .join(', '),
          message:
            'A hand-made sleep: wait for what it stands for with waitFor (test/support/wait-for.ts); a deadline in a race is delay(ms) from node:timers/promises.',
        },
        {
          selector:
            "MemberExpression[object.name='vi'][property.name=/^(waitFor|waitUntil)$/], MemberExpression[object.name='expect'][property.name='poll']",
          message: "The suite's one poll is waitFor (test/support/wait-for.ts).",
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
