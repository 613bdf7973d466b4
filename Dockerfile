# The gateway image: the app package (the repository's root) and the library it is built on (packages/a2a-converse, an
# npm workspace); build with dev dependencies, run with production ones only.
# Node 24: the active LTS line (.ci/run smoke-tests it; the full suite runs on Node 20 and 22 is smoke-tested too).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/a2a-converse/package.json ./packages/a2a-converse/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.base.json tsconfig.build.json ./
COPY packages/a2a-converse ./packages/a2a-converse
COPY src ./src
COPY plugins ./plugins
COPY examples ./examples
COPY bench ./bench
COPY web ./web
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/a2a-converse/package.json ./packages/a2a-converse/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# The library (a workspace: node_modules/a2a-converse links to it) and the app, both built.
COPY --from=build /app/packages/a2a-converse/dist ./packages/a2a-converse/dist
COPY --from=build /app/dist ./dist
# Demo documents and declaration are read at run time (Markdown and JSON are not compiled).
COPY examples ./examples
# The inbox page's HTML and CSS (its script is compiled into dist/web/inbox).
COPY web/inbox/index.html web/inbox/inbox.css ./web/inbox/
# Without DATABASE_URL the gateway keeps its state in the embedded database, in a volume the node user owns.
ENV DATA_DIR=/data
RUN mkdir -m 700 /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health/live').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# npm start's Node flags (docs/state.md, "Memory"): V8's young generation kept small (2 MB semi-spaces), its old
# generation grown by 10 % over what a full collection left (no limit), PGlite's WebAssembly left to the baseline
# compiler (no optimising tier-up) and no Maglev (Node 22+'s mid-tier JavaScript compiler): ≈ 60–100 MB less
# resident at start and under load (≈ 500 MB less at a start on Node 24), 7–13 % more CPU per request.
CMD ["node", "--max-semi-space-size=2", "--heap-growing-percent=10", "--liftoff-only", "--no-maglev", "dist/src/gateway/main.js"]
