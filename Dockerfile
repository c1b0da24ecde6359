# checkpointd container image.
#
#   docker build -t checkpointd .
#
# Stage 1 builds the release binary with exactly the command CI runs (.ci/run checks that this
# file and CI agree). Dependencies are built first, against placeholder sources, so that layer is
# reused until a manifest, Cargo.lock or the proto files change.
# Stage 2 is a slim Debian with CA certificates and the binary, run as an unprivileged user.

ARG RUST_VERSION=1.89

FROM rust:${RUST_VERSION}-slim-bookworm AS build
WORKDIR /src

# Dependency layer: the manifests, the lock file, the protocol crate's build script and the
# proto files, with placeholder sources for every workspace member.
COPY Cargo.toml Cargo.lock ./
COPY proto ./proto
COPY crates ./crates-src
RUN for manifest in crates-src/*/Cargo.toml; do \
      member=crates/$(basename "$(dirname "$manifest")"); \
      mkdir -p "$member/src"; cp "$manifest" "$member/"; \
      echo 'fn main() {}' > "$member/src/main.rs"; touch "$member/src/lib.rs"; \
      for bin in $(sed -n 's/^path = "\(src\/bin\/.*\)"/\1/p' "$manifest"); do \
        mkdir -p "$member/$(dirname "$bin")"; echo 'fn main() {}' > "$member/$bin"; \
      done; \
    done \
 && cp crates-src/protocol/build.rs crates/protocol/ \
 && rm -rf crates-src
RUN cargo build --release --locked

# The real sources. Touching the crate roots makes cargo rebuild the workspace's own crates,
# whatever timestamps COPY preserved.
COPY crates ./crates
RUN find crates -path '*/src/*.rs' -exec touch {} +
RUN cargo build --release --locked

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 checkpointd \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin checkpointd
COPY --from=build /src/target/release/checkpointd /usr/local/bin/checkpointd

# In a container the server must listen on every interface; the database has no default here
# on purpose (the embedded SQLite default would write into the image): set CHECKPOINTD_DATABASE.
# On every interface the server also needs CHECKPOINTD_AUTH (or, knowingly,
# CHECKPOINTD_ALLOW_UNAUTHENTICATED=true); the image chooses neither for you.
ENV CHECKPOINTD_LISTEN=0.0.0.0:50051 \
    CHECKPOINTD_ADMIN_LISTEN=0.0.0.0:9464 \
    CHECKPOINTD_LOG_FORMAT=json

# 50051: gRPC (checkpoints, tasks, health, reflection). 9464: admin HTTP (/metrics, /healthz).
EXPOSE 50051 9464
USER 10001:10001

# The binary speaks the gRPC health protocol itself; no shell or probe tool is needed.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["checkpointd", "health", "--addr", "127.0.0.1:50051"]

ENTRYPOINT ["checkpointd"]
CMD ["serve"]
