import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file's location so `node dist/main.js` works from any directory. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations');
export const VIEWS_DIR = path.join(PROJECT_ROOT, 'views');
export const DEFAULT_CONFIG_DIR = path.join(PROJECT_ROOT, 'config');
/** Redoc's browser bundle and its licences, vendored (vendor/redoc/README.md): the API reference page serves it. */
export const REDOC_DIR = path.join(PROJECT_ROOT, 'vendor', 'redoc');
