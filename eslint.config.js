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
  { files: ['src/config/**', 'test/**', 'bench/**', 'scripts/**', 'vitest.config.ts', 'vitest.interop.config.ts', 'eslint.config.js'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['src/db/embedded-cluster.ts', 'src/db/cluster-tools.ts'],
    // The embedded cluster's binaries run with the caller's environment, passed through untouched.
    rules: { 'no-restricted-syntax': 'off' },
  },
);
