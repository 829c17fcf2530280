# podium-server's image, the one deploy/kubernetes/server.yaml runs (docs/operations.md,
# "Podium on Kubernetes"). Built from the repository root after the Release build and the
# dashboard:
#   ./scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release -DPODIUM_TESTS=OFF
#   npm --prefix web run build
#   docker build -f deploy/kubernetes/server.Dockerfile -t REGISTRY/podium-server:VERSION .
# The base is the Debian release the binaries are built on (bookworm: Boost 1.81, PostgreSQL 15
# client); the runtime libraries are those `ldd build/release/bin/podium-server` names.
# kubectl (the Kubernetes executor's tool) comes from the Kubernetes project's own image.
FROM registry.k8s.io/kubectl:v1.34.0 AS kubectl

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libpq5 libsodium23 \
      libspdlog1.10 libfmt9 libssl3 libyaml-cpp0.7 zlib1g \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home --home-dir /tmp podium
COPY --from=kubectl /bin/kubectl /usr/local/bin/kubectl
COPY build/release/bin/podium-server /usr/local/bin/podium-server
COPY web/dist /usr/share/podium/web
USER 10001:10001
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/podium-server"]
