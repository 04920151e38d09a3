#!/usr/bin/env bash
# Runs kvbench with its output also appended to a log, for compare.py's --kvbench/--dbbench (which
# keeps only the ops/sec lines): usage  kvbench_logged.sh LOG KVBENCH [flags...]
# The process is exec'd, so /usr/bin/time (compare.py's peak RSS) measures kvbench itself.
set -euo pipefail
log=$1
shift
{ echo "### $(date -u +%FT%TZ) $*"; } >>"$log"
exec > >(tee -a "$log")
exec "$@"
