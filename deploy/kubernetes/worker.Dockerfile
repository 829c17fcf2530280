# The workers' image (executors.worker_image in deploy/kubernetes/server.yaml): an init
# container of every JobSet pod runs `cp /podium-worker /podium/podium-worker`, and the training
# container starts `/podium/podium-worker attach`, so the team's training image needs no change.
# The binary runs inside the training image, so it is the portable build, which needs nothing
# but glibc >= 2.30 (docs/operations.md, "Installing the worker"). From the repository root:
#   scripts/build-portable-worker.sh
#   docker build -f deploy/kubernetes/worker.Dockerfile -t REGISTRY/podium-worker:VERSION .
FROM debian:bookworm-slim
COPY build/portable/dist/podium-worker /podium-worker
ENTRYPOINT ["/podium-worker"]
