#!/usr/bin/env bash
# Octave bwlabeln oracle for the CPU labeller: a fresh seed every run (printed), >= 50 random volumes.
# usage: label_oracle.sh GENERATOR SCRIPT_DIR [SEED]
set -euo pipefail
generator=$1 script_dir=$2
seed=${3:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
if ! command -v octave-cli >/dev/null; then
    echo "SKIP: octave-cli not installed (scripts/install-deps installs octave and octave-image)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "seed $seed (rerun: tests/label_oracle.sh $generator $script_dir $seed)"
"$generator" "$work" "$seed" 60
octave-cli --no-gui -q "$script_dir/label_oracle.m" "$work"
