# syntax=docker/dockerfile:1
# Almoner's production image: docs/operations.md, "Docker and compose".

# ---- build: every dependency, then the TypeScript build (dist/)
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- dependencies: what the server runs with, without the dev tools
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# ---- the image: the build, the production dependencies and the files read at run time
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    ALMONER_PROFILE=production \
    UV_THREADPOOL_SIZE=2 \
    ALMONER_LISTEN=0.0.0.0:8080 \
    ALMONER_DATA_DIR=/var/lib/almoner/data \
    ALMONER_CLIENTS_FILE=/var/lib/almoner/clients.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json's "type": "module" makes dist/ ES modules.
COPY package.json ./
COPY config/default.json config/production.json ./config/
COPY migrations ./migrations
COPY views ./views
# Redoc's browser bundle for the API reference page, vendored with its licences (vendor/redoc/README.md).
COPY vendor/redoc ./vendor/redoc
# The shipped list of common passwords, read from src/ at run time (src/accounts/password-policy.ts).
COPY src/accounts/common-passwords.txt ./src/accounts/
COPY scripts/healthcheck.mjs ./scripts/
# The code stays root's and read-only; the server runs as the image's unprivileged `node`
# user and writes only under /var/lib/almoner (the clients file, its lock, data_dir).
RUN mkdir -p /var/lib/almoner/data && chown -R node:node /var/lib/almoner
VOLUME /var/lib/almoner
USER node
EXPOSE 8080
# Liveness: /healthz on loopback, at the port of ALMONER_LISTEN, over HTTPS when the process
# terminates TLS itself (ALMONER_TLS_CERT), else plain HTTP, which the production profile
# answers from loopback (docs/operations.md, "Health checks").
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "scripts/healthcheck.mjs"]
# The production profile's command (docs/operations.md): UV_THREADPOOL_SIZE=2 is set above.
CMD ["node", "--max-semi-space-size=32", "dist/main.js"]
