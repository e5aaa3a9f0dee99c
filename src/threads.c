/* Thread count: set from R by dd_threads(); every parallel region asks
 * dd_nthreads() so that small inputs stay serial. omp_set_num_threads() is
 * never called. Long loops run in chunks (dd_chunks_next) so that Ctrl-C is
 * seen between chunks; a forked child (parallel::mclapply) runs serially. */
#include "diffdiff.h"
#include <time.h>
#if !defined(_WIN32)
#include <pthread.h>
#define DD_HAVE_ATFORK 1
#endif

static int dd_threads_max = 1;
static int dd_forked = 0;   /* set in a forked child: its OpenMP runtime is not safe to use */
static double dd_throttle = 65536.0; /* work units per thread before a 2nd one pays */

int dd_nthreads(int ntasks, double work) {
  if (dd_forked) return 1;
  int nt = dd_threads_max;
  if (ntasks < nt) nt = ntasks;
  int by_work = (int) (work / dd_throttle);
  if (by_work < nt) nt = by_work;
  return nt < 1 ? 1 : nt;
}

SEXP C_set_threads(SEXP n, SEXP throttle) {
  int k = dd_chk_int(n, 1, 100000, "C_set_threads", "n");
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

/* ---- forked children run single-threaded --------------------------------
 * GNU OpenMP's thread pool does not survive fork(): a child that enters a
 * parallel region after the parent used threads can hang. As data.table
 * does, a pthread_atfork handler makes every child serial (its
 * dd_threads() reports 1); the parent is unaffected. */
#ifdef DD_HAVE_ATFORK
static void dd_after_fork_child(void) { dd_forked = 1; dd_threads_max = 1; }
#endif

void dd_threads_init(void) {
#ifdef DD_HAVE_ATFORK
  pthread_atfork(NULL, NULL, dd_after_fork_child);
#endif
}

/* ---- chunked loops with Ctrl-C between chunks ---------------------------
 * Usage (the only way long loops are written in this package):
 *   dd_chunks ch; dd_chunks_init(&ch, ntask, nth);
 *   while (dd_chunks_next(&ch)) {
 *     const int t_lo = ch.lo, t_hi = ch.hi;
 *     #pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
 *     for (int t = t_lo; t < t_hi; t++) { ... task t ... }
 *   }
 * The bounds are copied into fresh locals: read from the struct (whose
 * address escaped), they made gcc assume every int store in the loop body
 * could change them, which cost up to 7x in the multiplier bootstrap.
 * Between two chunks the main thread (outside any parallel region) calls
 * R_CheckUserInterrupt(), which longjmps back to R on Ctrl-C: all scratch must
 * come from R_alloc so that nothing leaks. A chunk's size adapts so that one
 * takes between DD_CHUNK_SECONDS / 2 and 2 DD_CHUNK_SECONDS (when tasks are
 * short); the size never changes which task computes
 * what, so results are the same bit for bit for any thread count and timing.
 * A single task longer than a second delays the check to its end. */
#define DD_CHUNK_SECONDS 0.25

static double dd_now(void) {
#ifdef _OPENMP
  return omp_get_wtime();
#else
  return (double) clock() / CLOCKS_PER_SEC;
#endif
}

void dd_chunks_init(dd_chunks *c, int n, int nth) {
  c->n = n < 0 ? 0 : n;
  c->lo = 0; c->hi = 0;
  c->unit = nth < 1 ? 1 : nth;
  c->step = c->unit;
  c->t0 = -1.0;
}

int dd_chunks_next(dd_chunks *c) {
  if (c->t0 >= 0.0) {                      /* a chunk has run: check, adapt */
    const double el = dd_now() - c->t0;
    R_CheckUserInterrupt();
    /* grow while a chunk is short (the barrier at its end idles threads
     * for at most one task), shrink when it is long (Ctrl-C waits for it) */
    if (el < DD_CHUNK_SECONDS / 2 && c->step < (1 << 24)) c->step *= 2;
    else if (el > DD_CHUNK_SECONDS * 2 && c->step > c->unit) c->step /= 2;
    if (c->step < c->unit) c->step = c->unit;
  }
  c->lo = c->hi;
  if (c->lo >= c->n) return 0;
  c->hi = (c->n - c->lo > c->step) ? c->lo + c->step : c->n;
  c->t0 = dd_now();
  return 1;
}

/* serial loops of the main thread (no parallel region): Ctrl-C about every
 * DD_CHUNK_SECONDS, cheap to call every iteration */
void dd_check_interrupt(double *t_last) {
  const double now = dd_now();
  if (*t_last < 0.0 || now - *t_last >= DD_CHUNK_SECONDS) {
    *t_last = now;
    R_CheckUserInterrupt();
  }
}
