#!/usr/bin/env bash
# Call 11: PRS's block parts as jobs: first runs, a7b2577 (.snap_head) against this tree, interleaved; PRS steps.
R=$OUT/c11; mkdir -p $R
{ date -u; lscpu | grep "Model name"; nproc; cat /proc/loadavg; } > $R/env.txt 2>&1
ONLY="prs default,prs paper 000,prs 1,024 x 30"
for i in 1 2; do for v in before after; do
  P=src; [ $v = before ] && P=.snap_head/src
  PYTHONPATH=$P timeout 120 python3 benchmarks/first_run.py --cpu --repeats 1 --only "$ONLY" --json $R/first_${v}_$i.json > $R/first_${v}_$i.log 2>&1
  echo "first $v $i rc=$?" >> $R/env.txt
done; done
for th in 16 1; do for i in 1 2; do for v in before after; do
  P=src; [ $v = before ] && P=.snap_head/src
  echo "== $v threads $th round $i" >> $R/steps.log
  NUMBA_CACHE_DIR=/tmp/nc_$v PYTHONPATH=$P timeout 60 python3 benchmarks/native_step.py --threads $th --only prs >> $R/steps.log 2>&1
done; done; done
cat /proc/loadavg >> $R/env.txt
for f in $R/first_*.log; do echo "## $(basename $f)"; tail -4 $f; done
cat $R/steps.log
