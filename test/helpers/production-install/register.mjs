// `node --import tsx --import ./test/helpers/production-install/register.mjs <entry>`: runs the
// entry as on a production install (`npm ci --omit=dev`, the Docker image), where the packages
// that only the dev dependencies bring are not installed (hooks.mjs). Registered after tsx, its
// hooks run first.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
