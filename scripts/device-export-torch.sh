#!/usr/bin/env bash
# Re-exports the test models with the PyTorch of the GPU machines (2.11 when
# last run), so that test/DataParallel checks that documents exported by
# current PyTorch compile and match torch's gradients. Run it on a device
# machine from the repository root:
#   bash scripts/device-export-torch.sh OUTDIR
# then copy OUTDIR/*.json to test/DataParallel/Inputs/torch<version>-*.json.
set -euo pipefail
OUT=${1:?usage: device-export-torch.sh OUTDIR}
mkdir -p "$OUT"
python3 -c "import torch; print('torch', torch.__version__)"
for model in mlp transformer; do
  python3 scripts/export_torch.py $model "$OUT/$model.json" --world-size 2
done
