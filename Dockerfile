# The memory server over streamable HTTP (http://HOST:8765/mcp). docker-compose.yml wires
# it to Qdrant and Neo4j; alone it uses the embedded stores under /data.
#
#   docker build -t mcp-hybrid-memory .
#   export HYBRID_MEMORY_HTTP_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
#   docker run -p 127.0.0.1:8765:8765 -v hybrid-memory:/data -e HYBRID_MEMORY_HTTP_TOKEN mcp-hybrid-memory
#
# Bound to 0.0.0.0 inside the container, the server refuses to start without a bearer token
# (HYBRID_MEMORY_HTTP_TOKEN, or HYBRID_MEMORY_HTTP_TOKEN_FILE=/run/secrets/... for a Docker secret).
# It answers Host 127.0.0.1:8765 / localhost:8765 only: reached under another name or port, add
# it with HYBRID_MEMORY_HTTP_ALLOWED_HOSTS (e.g. memory.example.com or localhost:9000).
#
# The default embedding model (int8 all-MiniLM-L6-v2) is inside the package: no download.
# A fastembed model chosen by HYBRID_MEMORY_EMBEDDING_MODEL is downloaded into /data/fastembed.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
WORKDIR /src
# Only what the wheel is built from, so edits to tests or docs do not invalidate this layer.
COPY pyproject.toml README.md ./
COPY src ./src
RUN /opt/venv/bin/pip install .

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HYBRID_MEMORY_DATA_DIR=/data \
    FASTEMBED_CACHE_PATH=/data/fastembed
COPY --from=build /opt/venv /opt/venv
# An unprivileged user owns the data volume; the server needs no other write access.
RUN useradd --create-home --uid 10001 memory && mkdir /data && chown memory:memory /data
USER memory
VOLUME /data
EXPOSE 8765
# A TCP connect: the image has no curl, and an MCP request would need a session.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
    CMD ["python", "-c", "import socket; socket.create_connection(('127.0.0.1', 8765), 3).close()"]
ENTRYPOINT ["hybrid-memory"]
# 0.0.0.0 inside the container, so a token is required; publish the port on the host's loopback
# unless other machines should reach it (see docker-compose.yml).
CMD ["serve", "--transport", "http", "--host", "0.0.0.0", "--port", "8765"]
