# syntax=docker/dockerfile:1.7
#
# Converge operator image: `converge run` on Node.js 24, which runs the TypeScript sources directly
# (type stripping), so there is no build step — only production dependencies are installed.
#
#   docker build -t converge:dev .
#   converge manifests --image converge:dev --apply
#
# Pin NODE_IMAGE by digest in release builds (node:24-alpine@sha256:…).
ARG NODE_IMAGE=node:24-alpine

# ---- dependencies: production only, exactly as locked, no install scripts ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime: node, the sources, production node_modules; no npm, no shell tools needed ----
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
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# `converge manifests` renders from deploy/ (it also needs kubectl, which this image does not ship).
COPY deploy ./deploy
# Numeric non-root user, so the kubelet can verify runAsNonRoot without a passwd entry.
USER 65532:65532
# 8080: metrics, 8081: health probes (/healthz, /readyz).
EXPOSE 8080 8081
ENTRYPOINT ["node", "packages/operators/src/cli/main.ts"]
CMD ["run"]
