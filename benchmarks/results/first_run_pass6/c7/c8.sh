#!/usr/bin/env bash
# Call 8/9: every configuration of first_run.py --cpu on this tree, 2 repeats: $1 = first or second half.
R=$OUT/c8_$1; mkdir -p $R
{ date -u; lscpu | grep "Model name"; nproc; cat /proc/loadavg; } > $R/env.txt 2>&1
if [ "$1" = a ]; then ONLY="pso default,prs default,fep default,apo default,firefly default,pso paper 001,prs paper 000,fep paper 004"
else ONLY="apo paper 003,firefly paper 002,firefly 1,024 x 32,prs 1,024 x 30,de default,lshade default,jso default,cmaes default,compare"; fi
PYTHONPATH=src timeout 560 python3 benchmarks/first_run.py --cpu --repeats 2 --only "$ONLY" --json $R/first.json 2>&1 | tee $R/first.log | tail -25
cat /proc/loadavg >> $R/env.txt
