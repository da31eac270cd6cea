# graphmem serve in a container: the REST API with the local extraction model assembled at
# build time (no download when it runs). docker-compose.yml runs it beside Neo4j.
#
#   docker compose up -d --build --wait
#   docker compose exec graphmem graphmem keys create --namespace acme   # listening beyond loopback needs keys
FROM python:3.11.13-slim-bookworm

# llama-cpp-python builds llama.cpp from source (about 10 minutes on 2 cores)
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
RUN pip install ".[llm,serve]" \
 && graphmem model fetch \
 && useradd --system --create-home --home-dir /home/graphmem graphmem \
 && mkdir -p /data && chown graphmem /data

USER graphmem
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=6 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/ready', timeout=4).status != 200)"]
CMD ["graphmem", "serve", "--host", "0.0.0.0", "--port", "8765"]
