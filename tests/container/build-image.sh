#!/usr/bin/env bash
# CTest container_image: scripts/image builds llmchaos:VERSION and llmchaos:dev from the built binary.
set -uo pipefail
llmchaos=$1 root=$2 build=$3
docker info >/dev/null 2>&1 || { echo "SKIP: no Docker daemon answers (docker info failed)"; exit 77; }
LLMCHAOS_IMAGE_BINARY=$llmchaos BUILD_DIR=$build exec "$root/scripts/image"
