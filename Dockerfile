# syntax=docker/dockerfile:1
#
# The Converge operator image: `converge run` on Node.js 24, from the same tarballs `npm run pack`
# makes (compiled JavaScript; ADR 0011), with production dependencies only, as a non-root user on
# a read-only root filesystem.
#
#   docker build -t converge:dev .                 # or: podman build --network host -t converge:dev .
#   npm run image                                  # the same with podman, on a machine with no registry
#
# NODE_IMAGE is an official Debian-based Node.js 24 image (`node:24-bookworm-slim`; pin it by
# digest in release builds). Where no registry can be reached, `npm run image` builds an
# equivalent base locally (Debian from debootstrap + the Node.js binary of the npm `node` package
# + npm) and passes it here as NODE_IMAGE.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: the workspace's tarballs ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/runtime/package.json packages/runtime/
COPY packages/envtest/package.json packages/envtest/
COPY packages/operators/package.json packages/operators/
COPY examples/configmap-mirror/package.json examples/configmap-mirror/
# --ignore-scripts: the `node` dev dependency would fetch a second Node.js; the image's own runs the build.
# Behind a TLS-intercepting proxy, pass its CA bundle as the build secret `ca` (`--secret id=ca,src=<file>`).
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi; \
    npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN node scripts/pack.ts --out /tarballs

# ---- deps: the tarballs installed with production dependencies only ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=build /tarballs/ /tarballs/
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi; \
    printf '{"name":"converge-image","version":"0.0.0","private":true,"type":"module"}\n' > package.json \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts \
      /tarballs/converge-runtime-*.tgz /tarballs/converge-envtest-*.tgz /tarballs/converge-operators-*.tgz \
 && rm -rf /tarballs /root/.npm

# ---- runtime: node and the installed packages; no npm, no sources ----
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="converge" \
      org.opencontainers.image.description="Kubernetes operators in TypeScript: Microservice and DigitalHumanProvider" \
      org.opencontainers.image.licenses="Apache-2.0"
# The package managers are not used at run time; dropping them shrinks the image and its CVE surface.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
           /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*
ENV NODE_ENV=production
WORKDIR /app
# Files stay owned by root and read-only for the process; the pod runs with readOnlyRootFilesystem.
COPY --from=deps /app /app
# Numeric non-root user, so the kubelet can verify runAsNonRoot without a passwd entry.
USER 65532:65532
# 8080: metrics, 8081: health probes (/healthz, /readyz).
EXPOSE 8080 8081
# Flags that trade V8 speed the operator does not need for memory (ADR 0034; a test keeps this line
# equal to packages/operators/src/operators/node-flags.ts).
ENTRYPOINT ["node", "--max-semi-space-size=2", "--no-opt", "--no-maglev", "--optimize-for-size", "/app/node_modules/@converge/operators/bin/converge.js"]
CMD ["run"]
