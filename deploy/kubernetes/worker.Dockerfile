# The workers' image (executors.worker_image in deploy/kubernetes/server.yaml): an init
# container of every JobSet pod runs `cp /podium-worker /podium/podium-worker`, and the training
# container starts `/podium/podium-worker attach`, so the team's training image needs no change.
# The binary runs inside the training image: build it so that it needs nothing that image lacks
# (docs/operations.md, "Podium on Kubernetes"). From the repository root:
#   docker build -f deploy/kubernetes/worker.Dockerfile -t REGISTRY/podium-worker:VERSION .
FROM debian:bookworm-slim
COPY build/release/bin/podium-worker /podium-worker
ENTRYPOINT ["/podium-worker"]
