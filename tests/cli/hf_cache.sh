#!/bin/sh
# `hwaccel plan --model org/name` from a Hugging Face hub cache built here
# (HF_HUB_CACHE): a snapshot whose config.json links into blobs/, a missing
# repo (exit 1, naming the cache and `hf download`), a bad repo id (exit 1).
hwaccel="$1"

. "$(dirname "$0")/expect.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo="$tmp/hub/models--acme--tiny-llama"
commit=0123456789abcdef0123456789abcdef01234567
mkdir -p "$repo/blobs" "$repo/refs" "$repo/snapshots/$commit"
cat > "$repo/blobs/5e1f" <<'EOF'
{"model_type":"llama","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,
 "num_key_value_heads":32,"intermediate_size":11008,"vocab_size":32000,"tie_word_embeddings":false,
 "max_position_embeddings":4096}
EOF
ln -s ../../blobs/5e1f "$repo/snapshots/$commit/config.json"
printf '%s' "$commit" > "$repo/refs/main"

HF_HUB_CACHE="$tmp/hub"
export HF_HUB_CACHE
unset HUGGINGFACE_HUB_CACHE HF_HOME XDG_CACHE_HOME

expect 0 plan --model acme/tiny-llama --devices 1xL4-24GB
expect 0 plan --model "acme/tiny-llama@$commit" --devices 1xL4-24GB
expect 1 plan --model acme/not-downloaded --devices 1xL4-24GB
expect 1 plan --model "acme/bad name" --devices 1xL4-24GB

out=$("$hwaccel" plan --model acme/tiny-llama --devices 1xL4-24GB --json)
case "$out" in
  *'acme/tiny-llama'*'"fits":'*) ;;
  *) echo "FAIL: plan of a cached model: $out"; failures=$((failures + 1)) ;;
esac
err=$("$hwaccel" plan --model acme/not-downloaded --devices 1xL4-24GB 2>&1 >/dev/null)
case "$err" in
  *"$tmp/hub"*"hf download acme/not-downloaded"*) ;;
  *) echo "FAIL: a repo not in the cache: $err"; failures=$((failures + 1)) ;;
esac

[ "$failures" -eq 0 ] || exit 1
echo "all Hugging Face cache cases as expected"
