# syntax=docker/dockerfile:1
# The service's container image: `rln-cloud serve`, as `npm start` runs it.
#
#   docker build -t registry.example.com/rln-cloud:1.0.0 .
#
# scripts/service-image.sh builds the same image without Docker (a docker-archive tar); keep the
# two in step: the same files under /app, the same user, entry point, environment, ports, volume.
#
# Entry point: the esbuild bundle (dist/rln-cloud.mjs, built by scripts/build.mjs), not
# bin/rln-cloud.mjs. The bundle is what `npm start` runs: one file loads in a fraction of the time
# ~200 TypeScript modules take through the tsx loader, which matters for a replica's readiness and
# so for a rolling update; and nothing is compiled at run time. The sources stay out of the image
# except the files the service reads at run time (migrations, web assets, the VSS protocol file; found from
# /app/package.json, see src/paths.ts) and devnode (RUNTIME=process runs it when RLN_COMMAND is
# unset).

ARG NODE_IMAGE=node:24-bookworm-slim

# Production dependencies only, from the lock file. No install scripts: no dependency needs one
# (esbuild's binary comes in its platform package; secp256k1's libsecp256k1 addon comes prebuilt
# in its own, for linux-x64 glibc and musl: elsewhere the service checks VSS signatures with OpenSSL).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The bundle, from the sources, with the project's own build script (esbuild is a production
# dependency, so the deps stage has it).
FROM deps AS bundle
COPY scripts/build.mjs scripts/build.mjs
COPY src src
RUN node scripts/build.mjs

FROM ${NODE_IMAGE} AS runtime
# The node image has a user "node" with uid 1000; it becomes rlncloud (uid/gid 1000, as in the
# image scripts/service-image.sh builds and the uid the Kubernetes manifests run as).
RUN groupmod -n rlncloud node && usermod -l rlncloud -d /tmp node \
 && mkdir -p /data && chown rlncloud:rlncloud /data && chmod 0700 /data \
 && printf '%s\n' '#!/usr/local/bin/node' "import(require('node:url').pathToFileURL(require('node:path').join(__dirname, '../../../app/dist/rln-cloud.mjs')).href);" >/usr/local/bin/rln-cloud \
 && chmod 755 /usr/local/bin/rln-cloud
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules node_modules
COPY --from=bundle /app/dist dist
COPY src/db/migrations src/db/migrations
COPY src/web/public src/web/public
COPY src/vss/vss.proto src/vss/vss.proto
COPY bin bin
COPY devnode devnode

# NODE_ENV=production: no development user, no webhooks to private addresses (see
# docs/CONFIGURATION.md). HOST=0.0.0.0: in a container the listeners must take outside connections.
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data
# API_PORT (management API), NODE_API_PORT (bearer gateway), MTLS_PORT (mutual-TLS gateway).
# METRICS_PORT (9464) is left out on purpose, so `docker run -P` does not publish it: see "Metrics".
EXPOSE 8080 8081 8443
# PGlite (without DATABASE_URL), the CA and webhook keys when not given as files, node logs
VOLUME /data
USER 1000:1000

# No curl in the image: node itself asks /healthz.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.API_PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# The same V8 flags as `npm start` (package.json; docs/OPERATIONS.md, "Footprint"): PGlite's
# WebAssembly stays on V8's baseline compiler, and the young generation is capped at 4 MiB per
# semi-space.
ENTRYPOINT ["node", "--enable-source-maps", "--liftoff-only", "--max-semi-space-size=4", "/app/dist/rln-cloud.mjs"]
CMD ["serve"]
