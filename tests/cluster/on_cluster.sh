#!/usr/bin/env bash
# Runs a command against the local cluster ctest assigned to it: with a resource spec (two clusters
# for two lanes, see scripts/test.sh), ctest names the cluster in CTEST_RESOURCE_GROUP_0_CLUSTER
# ("id:c0,slots:1") and its slurm.conf is in MLSUP_CLUSTER_CONF_<id>; without one, SLURM_CONF is kept.
set -euo pipefail
if [ -n "${CTEST_RESOURCE_GROUP_0_CLUSTER:-}" ]; then
  id=${CTEST_RESOURCE_GROUP_0_CLUSTER#id:}
  id=${id%%,*}
  var=MLSUP_CLUSTER_CONF_$id
  [ -n "${!var:-}" ] || { echo "on_cluster.sh: ctest assigned cluster '$id' but $var is not set" >&2; exit 1; }
  export SLURM_CONF=${!var}
  echo "on_cluster.sh: cluster $id ($SLURM_CONF)"
fi
exec "$@"
