#!/usr/bin/env bash
# Octave bwlabeln per-class oracle for the multilabel labeller (tests/multilabel_octave.m): a fresh seed every
# run (printed). usage: multilabel_octave.sh TOOL SCRIPT_DIR [SEED]
set -euo pipefail
tool=$1 script_dir=$2
seed=${3:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
if ! command -v octave-cli >/dev/null; then
    echo "SKIP: octave-cli not installed (scripts/install-deps installs octave and octave-image)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "seed $seed (rerun: tests/multilabel_octave.sh $tool $script_dir $seed)"
octave-cli --no-gui -q "$script_dir/multilabel_octave.m" "$tool" "$work" "$seed"
