"""
Combine several runs of bench/bench_chain_scaling.py into one table and fit (issue 17 re-measure).

Each argument is a folder a run wrote (``--out DIR``) holding its chain_scaling.csv; TAG names the
set of runs.  Per chain
length: the median of the runs' medians and the smallest run of all.  Fits, on both columns:
t = a + b N by least squares over all N (R^2 to five digits) and the log-log slope for N >= 16.
Writes chain_scaling_TAG.csv and chain_fit_TAG.csv beside this file and prints the tables.

Run: python bench/combine_chain_runs.py TAG DIR [DIR ...]
"""
import csv
from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent


def fit(n, t):
    """Return (a, b, R^2, log-log slope for N >= 16) of times t over chain lengths n."""
    b, a = np.polyfit(n, t, 1)
    residual = t - (a + b * n)
    r2 = 1.0 - np.sum(residual ** 2) / np.sum((t - t.mean()) ** 2)
    big = n >= 16
    slope = np.polyfit(np.log(n[big]), np.log(t[big]), 1)[0]
    return a, b, r2, slope


def main(tag, folders):
    """Read the runs, write and print the combined tables."""
    runs = []
    for folder in folders:
        with open(Path(folder) / 'chain_scaling.csv') as f:
            runs.append({int(r['links']): r for r in csv.DictReader(f)})
    sizes = sorted(runs[0])
    n = np.array(sizes, dtype=float)
    median = np.array([np.median([float(r[s]['median_us']) for r in runs]) for s in sizes])
    low = np.array([min(float(r[s]['min_run_us']) for r in runs) for s in sizes])
    rows = [{'links': s, 'median_of_run_medians_us': f'{m:.4g}', 'smallest_run_us': f'{lo:.4g}',
             'median_us_per_link': f'{m / s:.3f}', 'smallest_us_per_link': f'{lo / s:.3f}',
             'run_medians_us': ' '.join(r[s]['median_us'] for r in runs)}
            for s, m, lo in zip(sizes, median, low)]
    fits = []
    for name, t in (('median of run medians', median), ('smallest run', low)):
        a, b, r2, slope = fit(n, t)
        fits.append({'column': name, 'a_us': f'{a:.3g}', 'b_us_per_link': f'{b:.4g}',
                     'r_squared': f'{r2:.5f}', 'loglog_slope_n_ge_16': f'{slope:.3f}'})
    for name, table in ((f'chain_scaling_{tag}', rows), (f'chain_fit_{tag}', fits)):
        with open(HERE / f'{name}.csv', 'w', newline='') as f:
            writer = csv.DictWriter(f, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
        print(' | '.join(table[0]))
        for row in table:
            print(' | '.join(str(v) for v in row.values()))
        print()


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2:])
