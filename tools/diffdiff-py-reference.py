#!/usr/bin/env python3
"""Reference numbers from diff-diff (the Python library) for did_trop().

Reads a long panel from a CSV (columns given on the command line), fits
diff-diff's TROP estimator and writes its numbers, the diff-diff version and
the time the fit took to a JSON file. diff-diff is imported from the local
checkout named by the environment variable DIFFDIFF_PY_PATH (nothing is
fetched); without it, or when the import fails, the script says so and exits
with status 0 after writing {"skipped": reason}, so callers can skip.

Usage:
  DIFFDIFF_PY_PATH=/path/to/diff-diff python3 tools/diffdiff-py-reference.py \
      CSV OUT.json --method local --lambda 0.5,0.5,0.1 --nboot 0 \
      [--grid-time 0,0.5 --grid-unit 0,1 --grid-nn 0.1,inf] [--seed 1] \
      [--columns y,d,unit,time]

--lambda fixes the three tuning parameters (time, unit, nn; "inf" allowed):
diff-diff then gets one-point grids and its cross-validation score at that
point is not computed (it would not change the estimate). Without --lambda,
diff-diff's cross-validation runs over the --grid-* grids (its defaults when
absent). --nboot 0 skips diff-diff's bootstrap. The pure-Python backend is
used (DIFF_DIFF_BACKEND=python).
"""
import json
import math
import os
import sys
import time


def num(x):
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def floats(s):
    return [float(v) for v in s.split(",")]


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    csv, out = argv[0], argv[1]
    opts = {"--method": "local", "--nboot": "0", "--seed": "1", "--columns": "y,d,unit,time"}
    rest = argv[2:]
    for k, v in zip(rest[::2], rest[1::2]):
        opts[k] = v
    path = os.environ.get("DIFFDIFF_PY_PATH", "")
    if not path or not os.path.isdir(path):
        msg = "DIFFDIFF_PY_PATH does not name a diff-diff checkout; skipped"
        print("diffdiff-py-reference: " + msg)
        json.dump({"skipped": msg}, open(out, "w"))
        return 0
    os.environ.setdefault("DIFF_DIFF_BACKEND", "python")
    sys.path.insert(0, path)
    try:
        import warnings
        import numpy as np
        import pandas as pd
        import diff_diff
        from diff_diff import TROP
    except Exception as e:  # missing numpy/pandas/scipy, or a broken checkout
        msg = "cannot import diff-diff from %s (%r); skipped" % (path, e)
        print("diffdiff-py-reference: " + msg)
        json.dump({"skipped": msg}, open(out, "w"))
        return 0
    warnings.simplefilter("ignore")
    y, d, unit, tm = opts["--columns"].split(",")
    df = pd.read_csv(csv)
    nboot = int(opts["--nboot"])
    kw = {"method": opts["--method"], "n_bootstrap": max(nboot, 2), "seed": int(opts["--seed"])}
    fixed = "--lambda" in opts
    if fixed:
        lt, lu, ln = floats(opts["--lambda"])
        kw.update(lambda_time_grid=[lt], lambda_unit_grid=[lu], lambda_nn_grid=[ln])
    else:
        for a, g in (("--grid-time", "lambda_time_grid"), ("--grid-unit", "lambda_unit_grid"),
                     ("--grid-nn", "lambda_nn_grid")):
            if a in opts:
                kw[g] = floats(opts[a])
    est = TROP(**kw)
    if fixed:
        # one-point grids: the score at that point does not change the estimate
        est._loocv_score_obs_specific = lambda *a, **k: 0.0
        est._loocv_score_global = lambda *a, **k: 0.0
    if nboot == 0:
        est._bootstrap_variance = lambda *a, **k: (float("nan"), np.array([]))
        est._bootstrap_variance_global = lambda *a, **k: (float("nan"), np.array([]))
    t0 = time.time()
    r = est.fit(df, y, d, unit, tm)
    sec = time.time() - t0
    res = {
        "source": "diff-diff %s (Python, pure-Python backend), TROP(method=%r)" % (diff_diff.__version__,
                                                                                  opts["--method"]),
        "diff_diff_version": diff_diff.__version__, "csv": os.path.basename(csv), "seconds": sec,
        "method": opts["--method"], "nboot": nboot, "fixed_lambda": fixed,
        "att": num(r.att), "se": num(r.se), "p_value": num(r.p_value),
        "conf_int": [num(r.conf_int[0]), num(r.conf_int[1])],
        "lambda_time": num(r.lambda_time), "lambda_unit": num(r.lambda_unit), "lambda_nn": num(r.lambda_nn),
        "loocv_score": None if fixed else num(r.loocv_score),
        "n_treated_obs": int(r.n_treated_obs),
        "treatment_effects": [{"unit": k[0] if not hasattr(k[0], "item") else k[0].item(),
                               "time": k[1] if not hasattr(k[1], "item") else k[1].item(), "tau": num(v)}
                              for k, v in sorted(r.treatment_effects.items())],
    }
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print("diffdiff-py-reference: att %.10f in %.1f s" % (r.att, sec))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
