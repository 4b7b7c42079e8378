#!/usr/bin/env bash
# Call 7: CMA-ES, Firefly, PRS first runs, HEAD (.snap_head) against this tree, interleaved rounds; their steps.
R=$OUT/c7; mkdir -p $R
{ date -u; lscpu | grep "Model name"; nproc; cat /proc/loadavg; python3 -c "import numba, torch; print(numba.__version__, torch.__version__)"; } > $R/env.txt 2>&1
ONLY="cmaes default,firefly default,firefly 1,024 x 32,prs 1,024 x 30,prs default"
for i in 1 2; do for v in before after; do
  P=src; [ $v = before ] && P=.snap_head/src
  PYTHONPATH=$P timeout 150 python3 benchmarks/first_run.py --cpu --repeats 1 --only "$ONLY" --json $R/first_${v}_$i.json > $R/first_${v}_$i.log 2>&1
  echo "first $v $i rc=$?" >> $R/env.txt
done; done
for th in 16 1; do for i in 1 2; do for v in before after; do
  P=src; [ $v = before ] && P=.snap_head/src
  echo "== $v threads $th round $i" >> $R/steps.log
  NUMBA_CACHE_DIR=/tmp/nc_$v PYTHONPATH=$P timeout 60 python3 benchmarks/native_step.py --threads $th --only prs,firefly,cmaes >> $R/steps.log 2>&1
done; done; done
cat /proc/loadavg >> $R/env.txt
