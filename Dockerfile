# recrawl: multi-stage build on Node 24 LTS; the runtime image runs as the unprivileged `node` user.
# The build context is limited by .dockerignore to the files copied here.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The client package (@recrawl/client, an npm workspace) is linked into node_modules; its built files come from the build stage.
COPY packages/client/package.json ./packages/client/
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json ./packages/client/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY packages/client/tsconfig.json ./packages/client/
COPY packages/client/src ./packages/client/src
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/client/dist ./packages/client/dist
COPY package.json ./
COPY packages/client/package.json ./packages/client/
COPY migrations ./migrations
COPY openapi ./openapi
COPY web ./web
COPY datasets ./datasets
# `recrawl <command>` on the PATH (docker exec … recrawl create-key …); /data holds the embedded database.
RUN chmod +x dist/cli.js && ln -s /app/dist/cli.js /usr/local/bin/recrawl \
 && mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/cli.js", "start"]
