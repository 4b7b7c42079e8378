#!/usr/bin/env bash
# Call 10: the two configurations closest to the 5 s bound again, three pairs each (this tree).
R=$OUT/c10; mkdir -p $R
{ date -u; lscpu | grep "Model name"; nproc; cat /proc/loadavg; } > $R/env.txt 2>&1
PYTHONPATH=src timeout 400 python3 benchmarks/first_run.py --cpu --repeats 3 --only "apo paper 003,prs default" --json $R/first.json > $R/first.log 2>&1
echo "rc=$?" >> $R/env.txt; cat /proc/loadavg >> $R/env.txt
tail -6 $R/first.log
