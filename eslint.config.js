import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'scratch/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', NodeJS: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Only src/config reads process.env (ARCHITECTURE.md habit 6).' },
      ],
    },
  },
  // The authorization server and the resource gateway meet only through db/ (the stored
  // tokens) and accounts/: neither imports the other (issue 15).
  {
    files: ['src/oidc/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/gateway/**'], message: 'src/oidc must not import src/gateway: share through db/ or accounts/.' }] }] },
  },
  {
    files: ['src/gateway/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/oidc/**'], message: 'src/gateway must not import src/oidc: share through db/ or accounts/.' }] }] },
  },
  { files: ['src/config/**', 'test/**', 'bench/**', 'scripts/**', 'vitest.config.ts', 'vitest.interop.config.ts', 'eslint.config.js'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['src/db/embedded-cluster.ts', 'src/db/cluster-tools.ts'],
    // The embedded cluster's binaries run with the caller's environment, passed through untouched.
    rules: { 'no-restricted-syntax': 'off' },
  },
);
