# graphmem serve in a container: the REST API with the local extraction model assembled at
# build time (no download when it runs). docker-compose.yml runs it beside Neo4j.
#
#   export GRAPHMEM_FIRST_KEY="$(openssl rand -hex 32)"   # the API key clients will send (keep it)
#   docker compose up -d --build --wait
#
# Listening beyond loopback needs a key: GRAPHMEM_FIRST_KEY is stored as the first one on the
# first start (GRAPHMEM_FIRST_KEY_NAMESPACE, default "default"); without it and without a key
# file the server exits at once with a one-line error. More keys: graphmem keys create.
FROM python:3.11.13-slim-bookworm

# llama-cpp-python builds llama.cpp from source (about 10 minutes on 2 cores), for any x86-64
# CPU rather than the build machine's own (GGML_NATIVE=OFF: an image built on a machine with
# AVX-512 would die with "Illegal instruction" on one without it)
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake \
 && rm -rf /var/lib/apt/lists/*

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    GRAPHMEM_CACHE_DIR=/opt/graphmem/cache \
    GRAPHMEM_PATH=/data/graphmem.db \
    GRAPHMEM_KEYS_PATH=/data/graphmem.keys.db

WORKDIR /opt/graphmem/src
COPY pyproject.toml README.md ./
COPY graphmem ./graphmem
COPY cypher ./cypher
RUN CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install ".[llm,serve]" \
 && graphmem model fetch \
 && useradd --system --create-home --home-dir /home/graphmem graphmem \
 && mkdir -p /data && chown graphmem /data

USER graphmem
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=6 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/ready', timeout=4).status != 200)"]
CMD ["graphmem", "serve", "--host", "0.0.0.0", "--port", "8765"]
