# syntax=docker/dockerfile:1
# Parley's production image (docs/deployment.md). Two stages: the build stage installs every dependency and runs
# `npm run build` (browser bundles and dist/main.js); the runtime stage gets only the build output, the production
# dependencies and the config profiles, and runs as the unprivileged `node` user.
#
# PID 1 is tini, which hands SIGTERM to node and reaps children; node runs dist/main.js itself: never `npm start` or
# tsx, since npm does not pass SIGTERM on and the server would keep running until it is killed.

FROM node:20.19-bookworm-slim AS build
WORKDIR /app
# The lockfile and the workspace manifests first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/package.json
COPY sdk/tsconfig.build.json sdk/tsconfig.build.json
COPY sdk/src sdk/src
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20.19-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    SERVICE_CONFIG=/app/config/config.cluster.yaml
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/sdk/package.json ./sdk/package.json
COPY --from=build /app/sdk/dist ./sdk/dist
COPY --from=build /app/dist ./dist
COPY --from=build /app/public/build ./public/build
COPY --from=build /app/config ./config
# LMDB's directory (storage.engine: lmdb) and a generated service secret live here; unused on PostgreSQL.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--enable-source-maps", "dist/main.js"]
