"""The cost of a gemv call again, with the paired estimator (gemvlab/overhead.py), three times
per shape, after this session's final record (whose overhead section used the earlier,
unpaired estimator). Writes OUT/overhead.json; the first run of each shape replaces the
record's overhead rows, with a note (the other two show the spread between runs)."""
import json
import sys

from gemvlab import overhead

runs = [overhead.measure(M, K) for _ in range(3) for M, K in ((4096, 4096), (1024, 1024))]
for r in runs:
    print({k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()})
json.dump(runs, open(f"{sys.argv[1]}/overhead.json", "w"), indent=1)
