# One image for every lifeguard worker: `node packages/<worker>/dist/main.js` (see docker-compose.yml).
# Build: docker build -t lifeguard .    Run: docker run --rm lifeguard packages/node-monitor/dist/main.js
ARG NODE_IMAGE=node:20.20-bookworm-slim

# ---- build: install everything, compile, then keep only what runs ----------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# npm 11, as the repository's packageManager field says (install-script policy, lockfile format).
RUN npm install --global --no-audit --no-fund npm@11.19.1
COPY . .
RUN npm ci --no-audit --no-fund \
 && npx turbo run build --output-logs=errors-only \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf packages/*/src packages/*/test packages/*/bench packages/*/tsconfig*.json \
           packages/*/dist/.tsbuildinfo .turbo bench test scripts

# ---- runtime: Node, the fence agents and ipmitool, the compiled packages; not root -----------
FROM ${NODE_IMAGE}
RUN apt-get update \
 && apt-get install --yes --no-install-recommends fence-agents ipmitool ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    LIFEGUARD_HTTP_HOST=0.0.0.0 \
    LIFEGUARD_FENCE_AGENTS_DIRECTORY=/usr/sbin \
    LIFEGUARD_IPMITOOL_PATH=/usr/bin/ipmitool
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages ./packages
USER node
# Every lifeguard service answers on its health port; compose runs this probe as the healthcheck.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "packages/stack/dist/readiness-probe.js"]
ENTRYPOINT ["node"]
CMD ["packages/node-monitor/dist/main.js"]
