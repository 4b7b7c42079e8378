#!/usr/bin/env bash
# Call 9: the algorithm and engine GPU tests (-m gpu) at this tree.
R=$OUT/c9; mkdir -p $R
{ date -u; nvidia-smi --query-gpu=name --format=csv,noheader; } > $R/env.txt
pip install --no-index --no-deps --target /tmp/site .whl/opfunu-1.0.1-py3-none-any.whl > /dev/null 2>&1
PYTHONPATH=src:/tmp/site timeout 570 python3 -m pytest -m gpu -q -p no:cacheprovider -rfs \
  tests/test_every_algorithm.py tests/test_fast_engine.py tests/test_prs.py tests/test_firefly.py tests/test_pso.py \
  tests/test_fused.py tests/test_fused_apo.py tests/test_fep.py tests/test_apo.py tests/test_cmaes.py tests/test_engine.py \
  tests/test_auto_engine.py tests/test_local.py tests/test_long_runs.py tests/test_otsu.py tests/test_exports.py \
  tests/test_adapters.py tests/test_transforms.py tests/test_compare.py > $R/gpu.log 2>&1
echo "gpu rc=$?" >> $R/env.txt
tail -15 $R/gpu.log
