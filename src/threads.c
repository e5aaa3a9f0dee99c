/* Thread count: set from R by dd_threads(); every parallel region asks
 * dd_nthreads() so that small inputs stay serial. omp_set_num_threads() is
 * never called. */
#include "diffdiff.h"

static int dd_threads_max = 1;
static double dd_throttle = 65536.0; /* work units per thread before a 2nd one pays */

int dd_nthreads(int ntasks, double work) {
  int nt = dd_threads_max;
  if (ntasks < nt) nt = ntasks;
  int by_work = (int) (work / dd_throttle);
  if (by_work < nt) nt = by_work;
  return nt < 1 ? 1 : nt;
}

SEXP C_set_threads(SEXP n, SEXP throttle) {
  int k = asInteger(n);
  if (k == NA_INTEGER || k < 1) error("internal error in threads.c: bad thread count; please report");
  dd_threads_max = k;
  double th = asReal(throttle);
  if (R_FINITE(th) && th >= 1) dd_throttle = th;
  return ScalarInteger(dd_threads_max);
}

SEXP C_get_threads(void) { return ScalarInteger(dd_threads_max); }

SEXP C_num_procs(void) {
#ifdef _OPENMP
  return ScalarInteger(omp_get_num_procs());
#else
  return ScalarInteger(1);
#endif
}
