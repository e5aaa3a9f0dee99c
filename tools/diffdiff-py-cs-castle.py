#!/usr/bin/env python3
"""diff-diff's Callaway-Sant'Anna numbers on the shipped castle panel.

Writes inst/extdata/diffdiff_cs_castle.csv, the stored Python result the
vignette "Cross-checking Python results" and tests/testthat/test-compare.R
compare with did_cs(): diff-diff's CallawaySantAnna (defaults: doubly robust,
varying base period, no covariates) on castle.csv, outcome l_homicide, unit
sid, period year, first treated effyear, with control_group never_treated and
not_yet_treated, each with analytic SEs (n_bootstrap = 0) and with 999
multiplier-bootstrap draws (seed 42), aggregate = "event_study". Rows: the
group-time effects (term "ATT(g,t)"), the event-study effects ("event::e")
and the overall ATT ("ATT").

diff-diff is imported from the local checkout named by DIFFDIFF_PY_PATH
(nothing is fetched); the pure-Python backend is used. Without it the script
says so and exits 0 without writing anything.

Usage (from the package root):
  DIFFDIFF_PY_PATH=/path/to/diff-diff python3 tools/diffdiff-py-cs-castle.py
"""
import csv
import os
import sys
import warnings

path = os.environ.get("DIFFDIFF_PY_PATH")
if not path:
    print("diffdiff-py-cs-castle: DIFFDIFF_PY_PATH is not set; nothing written")
    sys.exit(0)
sys.path.insert(0, path)
os.environ["DIFF_DIFF_BACKEND"] = "python"
try:
    import pandas as pd
    import diff_diff
    from diff_diff import CallawaySantAnna
except Exception as e:  # noqa: BLE001
    print("diffdiff-py-cs-castle: cannot import diff-diff from %s: %s; nothing written" % (path, e))
    sys.exit(0)

warnings.simplefilter("ignore")
d = pd.read_csv("inst/extdata/castle.csv")
src = "diff-diff %s CallawaySantAnna (pure-Python backend)" % diff_diff.__version__
rows = []
for cg in ["never_treated", "not_yet_treated"]:
    for nb in [0, 999]:
        est = CallawaySantAnna(control_group=cg, n_bootstrap=nb, seed=42, cband=False)
        r = est.fit(d, "l_homicide", "sid", "year", "effyear", aggregate="event_study")
        base = {"source": src, "control_group": cg, "nboot": nb}
        for (g, t), v in sorted(r.group_time_effects.items()):
            rows.append(dict(base, term="ATT(%d,%d)" % (g, t), estimate=repr(float(v["effect"])),
                             **{"std.error": repr(float(v["se"]))}))
        for e, v in sorted((r.event_study_effects or {}).items()):
            rows.append(dict(base, term="event::%d" % e, estimate=repr(float(v["effect"])),
                             **{"std.error": repr(float(v["se"]))}))
        rows.append(dict(base, term="ATT", estimate=repr(float(r.overall_att)), **{"std.error": repr(float(r.overall_se))}))
with open("inst/extdata/diffdiff_cs_castle.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["source", "control_group", "nboot", "term", "estimate", "std.error"])
    w.writeheader()
    w.writerows(rows)
print("diffdiff-py-cs-castle: wrote %d rows (%s)" % (len(rows), src))
