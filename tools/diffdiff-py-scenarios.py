#!/usr/bin/env python3
"""diff-diff's six practitioner-workflow scenarios, run on this machine.

For bench/scenarios/run.R. Two parts, both with diff-diff's pure-Python
backend and single-threaded BLAS:

  timing  runs diff-diff's own scenario scripts
          (benchmarks/speed_review/bench_<scenario>.py) unchanged, each in a
          fresh process, from a copy of that folder in OUTDIR (so the
          checkout's published baselines are not overwritten); the JSON each
          writes (phase seconds, peak memory) lands in
          OUTDIR/speed_review/baselines/. geo_few_markets skips its large
          scale under Python by design; --all-scales runs it anyway.
  data    builds each scenario's data with the scripts' own builders (same
          seeds), writes OUTDIR/data/<scenario>_<scale>.csv, and fits the
          estimands that diffdiff computes the same way, writing
          OUTDIR/data/<scenario>_<scale>.json (the numbers and the diff-diff
          version).

diff-diff is imported from the local checkout named by DIFFDIFF_PY_PATH
(nothing is fetched). Without it, or when the import fails, the script says
so and exits 0 after writing OUTDIR/skipped.txt.

Usage: DIFFDIFF_PY_PATH=/path/to/diff-diff python3 tools/diffdiff-py-scenarios.py OUTDIR
       [--timing] [--data] [--scales small,medium,large] [--all-scales]
       [--scenarios campaign_staggered,...] (timing: only these scenarios)
"""
import json
import os
import shutil
import subprocess
import sys

SCENARIOS = ["campaign_staggered", "brand_awareness_survey", "brfss_panel", "geo_few_markets",
             "reversible_dcdh", "dose_response"]


def skip(outdir, why):
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "skipped.txt"), "w") as f:
        f.write(why + "\n")
    print("diffdiff-py-scenarios: " + why)
    sys.exit(0)


def env_python(path):
    e = dict(os.environ)
    e.update({"DIFF_DIFF_BACKEND": "python", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1", "PYTHONPATH": path})
    return e


# the driver run in each child: the bench script's own main(), optionally
# restricted to some scales and without its large-scale skip
DRIVER = r"""
import runpy, sys
path, scales, all_scales = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
sys.path.insert(0, __import__("os").path.dirname(path))
import diff_diff._backend as be
assert not be.HAS_RUST_BACKEND, "the Rust backend is loaded"
ns = runpy.run_path(path, run_name="bench")
if "SCALES" in ns and scales:
    keep = {k: v for k, v in ns["SCALES"].items() if k in scales.split(",")}
    ns["SCALES"].clear(); ns["SCALES"].update(keep)
if all_scales and "SKIP_PYTHON_AT" in ns:
    ns["SKIP_PYTHON_AT"].clear()
ns["main"]()
"""


def timing(path, outdir, scales, all_scales, only=None):
    src = os.path.join(path, "benchmarks", "speed_review")
    dst = os.path.join(outdir, "speed_review")
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    for f in os.listdir(os.path.join(dst, "baselines")):       # only this run's results stay
        if f.endswith(".json"):
            os.remove(os.path.join(dst, "baselines", f))
    for s in SCENARIOS:
        if only and s not in only:
            continue
        script = os.path.join(dst, "bench_%s.py" % s)
        print("diffdiff-py-scenarios: timing %s" % s, flush=True)
        r = subprocess.run([sys.executable, "-c", DRIVER, script, scales, "1" if all_scales else "0"],
                           env=env_python(path), cwd=dst, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(os.path.join(outdir, "timing_%s.log" % s), "w") as f:
            f.write(r.stdout)
        if r.returncode != 0:
            print("  exit status %d (see timing_%s.log)" % (r.returncode, s))


def data(path, outdir, scales):
    os.environ.update({"DIFF_DIFF_BACKEND": "python", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                       "MKL_NUM_THREADS": "1"})
    sys.path.insert(0, path)
    sr = os.path.join(path, "benchmarks", "speed_review")
    sys.path.insert(0, sr)
    import runpy
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np
    import diff_diff as dd
    os.makedirs(os.path.join(outdir, "data"), exist_ok=True)

    def write(name, df, out):
        df.to_csv(os.path.join(outdir, "data", name + ".csv"), index=False, float_format="%.17g")
        out["diff_diff_version"] = dd.__version__
        with open(os.path.join(outdir, "data", name + ".json"), "w") as f:
            json.dump(out, f, indent=1, default=float)
        print("diffdiff-py-scenarios: data %s" % name, flush=True)

    def mod(s):
        return runpy.run_path(os.path.join(sr, "bench_%s.py" % s), run_name="bench")

    want = scales.split(",") if scales else ["small", "medium", "large"]
    # 1: Callaway-Sant'Anna without covariates, analytic SEs, overall ATT
    m = mod("campaign_staggered")
    for sc, cfg in m["SCALES"].items():
        if sc not in want:
            continue
        d = m["build_data"](**cfg)
        r = dd.CallawaySantAnna(control_group="never_treated", estimation_method="dr", n_bootstrap=0).fit(
            d, outcome="outcome", unit="unit", time="period", first_treat="first_treat", aggregate="simple")
        write("campaign_staggered_" + sc, d, {"cs_nocov_att": r.overall_att, "cs_nocov_se": r.overall_se})
    # 2: the naive (HC1) and design-based (strata, PSU, fpc) 2x2
    m = mod("brand_awareness_survey")
    for sc, cfg in m["SCALES"].items():
        if sc not in want:
            continue
        d = m["build_data"](**cfg)
        kw = dict(outcome="outcome", treatment="treat_unit", time="post")
        naive = dd.DifferenceInDifferences(robust=True).fit(d, **kw)
        sd = dd.SurveyDesign(weights="weight", strata="stratum", psu="psu", fpc="fpc", nest=True)
        tsl = dd.DifferenceInDifferences(robust=True).fit(d, survey_design=sd, **kw)
        write("brand_awareness_survey_" + sc, d, {"naive_att": naive.att, "naive_se": naive.se, "tsl_att": tsl.att,
                                                   "tsl_se": tsl.se})
    # 3: the design-based cell means (small scale: the microdata CSV)
    m = mod("brfss_panel")
    for sc, cfg in m["SCALES"].items():
        if sc not in want or sc != "small":
            continue
        d = m["build_microdata"](**cfg)
        panel, _ = dd.aggregate_survey(d, by=["state", "year"], outcomes="y",
                                       survey_design=dd.SurveyDesign(weights="finalwt", strata="strata", psu="psu"))
        panel = panel.sort_values(["state", "year"])
        write("brfss_panel_" + sc, d, {"y_mean": panel["y_mean"].tolist(), "y_se": panel["y_se"].tolist()})
    # 4: synthetic DiD with jackknife SEs
    m = mod("geo_few_markets")
    for sc, cfg in m["SCALES"].items():
        if sc not in want:
            continue
        d = m["build_data"](**cfg)
        post = sorted(d.loc[(d["treat"] == 1) & (d["treated"] == 1), "period"].unique().tolist())
        r = dd.SyntheticDiD(variance_method="jackknife", seed=123).fit(
            d, outcome="outcome", unit="unit", time="period", treatment="treat", post_periods=post)
        write("geo_few_markets_" + sc, d, {"att": r.att, "se": r.se})
    # 6: the continuous-dose overall ATT and ACRT (cubic, one knot)
    m = mod("dose_response")
    d = m["build_data"]()
    r = dd.ContinuousDiD(degree=3, num_knots=1, n_bootstrap=0).fit(
        d, outcome="outcome", unit="unit", time="period", first_treat="first_treat", dose="dose", aggregate="dose")
    write("dose_response_small", d, {"att_o": r.overall_att, "acrt_o": r.overall_acrt})


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__)
        sys.exit(2)
    outdir = os.path.abspath(args[0])
    path = os.environ.get("DIFFDIFF_PY_PATH", "")
    if not path:
        skip(outdir, "DIFFDIFF_PY_PATH is not set; diff-diff's scenarios were not run")
    path = os.path.abspath(path)
    chk = subprocess.run([sys.executable, "-c", "import diff_diff, diff_diff._backend as b; "
                          "print(diff_diff.__version__, b.HAS_RUST_BACKEND)"], env=env_python(path),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if chk.returncode != 0:
        skip(outdir, "cannot import diff-diff from %s: %s" % (path, chk.stdout.strip().splitlines()[-1:]))
    print("diffdiff-py-scenarios: diff-diff %s" % chk.stdout.strip())
    scales = ""
    for a in sys.argv:
        if a.startswith("--scales="):
            scales = a.split("=", 1)[1]
    if "--scales" in sys.argv:
        scales = sys.argv[sys.argv.index("--scales") + 1]
    only = None
    if "--scenarios" in sys.argv:
        only = sys.argv[sys.argv.index("--scenarios") + 1].split(",")
        bad = [x for x in only if x not in SCENARIOS]
        if bad:
            print("diffdiff-py-scenarios: unknown scenario(s) %s; known: %s" % (", ".join(bad), ", ".join(SCENARIOS)))
            sys.exit(2)
    do_t = "--timing" in sys.argv or "--data" not in sys.argv
    do_d = "--data" in sys.argv or "--timing" not in sys.argv
    os.makedirs(outdir, exist_ok=True)
    if do_d:
        data(path, outdir, scales)
    if do_t:
        timing(path, outdir, scales, "--all-scales" in sys.argv, only)


if __name__ == "__main__":
    main()
