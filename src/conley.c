/* Conley (spatial HAC) meat: M = sum_i sum_j w_ij s_i s_j' over the pairs
 * of observations within the cutoff, found through a grid so that the work
 * grows with the number of neighbours, not with n^2.
 *
 * Distances (d in km, c the cutoff in km; a latitude, b longitude, radians):
 *   1 "spherical"  fixest 0.14's: a pair is considered when |da| <= L and
 *                  |db| <= L / cos((a_i + a_j) / 2), L = (c / 111) 3.14159 /
 *                  180 (fixest's constants), then d = 12752 asin(min(1,
 *                  sqrt(haversine))) (radius 6376 km);
 *   2 "triangular" fixest's default: the same pre-filter, then d = (111 180
 *                  / 3.14159) sqrt(da^2 + (cos((a_i + a_j)/2) db)^2);
 *   3 "euclidean"  planar coordinates in the cutoff's units.
 * Longitude differences wrap at the date line (fixest's |db| < 3.14159 ?
 * |db| : 6.28318 - |db|). Kernel: uniform (w = 1, d <= c) or Bartlett (w =
 * 1 - d / c). Pairs are formed within a group (the period, for the panel
 * form; one group otherwise) and never within a cluster (the caller adds
 * the cluster meat: weight 1 for every pair in a cluster). The panel form
 * also adds the serial pairs of a unit's own periods, |t - s| <= lag, with
 * Bartlett weights 1 - |t - s| / (lag + 1).
 *
 * The grid: rows of latitude (or y) of width L (or c), the points of each
 * (group, row) sorted by longitude (or x); rows are higher than L when L is
 * tiny (at most 1e7 rows); a point's neighbours lie in its
 * row and the two next to it, within a longitude window, and each pair is
 * visited once, from its first point in that order (its row and the next).
 * Each point's weighted sum v_i of its later neighbours' scores is computed
 * in parallel (points and neighbours in a fixed order), then M = sum_i s_i
 * s_i' + s_i v_i' + v_i s_i' in order on the main thread: the same bits for
 * any thread count.
 *
 * The same grid gives did_spillover() each unit's distance to the nearest
 * unit of each treated cohort within a cutoff (C_spill_nearest), with
 * the distances of fixest's expressions above.
 *
 * Entry points: C_conley_meat, C_spill_nearest. */
#include "diffdiff.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CL_PI5 3.14159              /* fixest's truncated pi */

typedef struct {
  const double *x, *y;              /* longitude / x, latitude / y (radians for 1, 2) */
  const int *grp;
  const long long *key;
} cl_sort_ctx;

static const cl_sort_ctx *cl_sctx;  /* qsort's context: set on the main thread only */

static int cl_cmp(const void *pa, const void *pb) {
  int a = *(const int *) pa, b = *(const int *) pb;
  long long ka = cl_sctx->key[a], kb = cl_sctx->key[b];
  if (ka != kb) return ka < kb ? -1 : 1;
  double xa = cl_sctx->x[a], xb = cl_sctx->x[b];
  if (xa != xb) return xa < xb ? -1 : 1;
  return a < b ? -1 : (a > b);
}

/* per point: sines and cosines of half the latitude and longitude, the
 * cosine of the latitude (so that a pair needs no trigonometric call but
 * near a boundary of its tests) */
typedef struct { double sa, ca, sb, cb, cy; } cl_trig;

/* the pair's weight (0: not a pair): fixest's rule; products of the points'
 * half-angle sines and cosines give cos((a_i + a_j) / 2) and the haversine
 * terms, and where a test is within 1e-9 of its boundary it is redone with
 * fixest's own expressions */
static double cl_weight(int dist, int kernel, double c, double L, double C2, double hc, double yi, double xi,
                        double yj, double xj, const cl_trig *ti, const cl_trig *tj) {
  double d;
  if (dist == 3) {
    double dx = xj - xi, dy = yj - yi;
    double d2 = dx * dx + dy * dy;
    if (!(d2 <= c * c)) return 0.0;
    if (kernel == 0) return 1.0;
    d = sqrt(d2);
  } else {
    double dlat = fabs(yj - yi);
    if (dlat > L) return 0.0;
    double dlon0 = fabs(xj - xi);
    double dlon = dlon0 < CL_PI5 ? dlon0 : 6.28318 - dlon0;
    double cbar = ti->ca * tj->ca - ti->sa * tj->sa;
    double lim = L / cbar;
    if (fabs(dlon - lim) <= 1e-9 * lim) { cbar = cos((yi + yj) / 2.0); lim = L / cbar; }
    if (dlon > lim) return 0.0;
    if (dist == 1) {
      double s1 = tj->sa * ti->ca - tj->ca * ti->sa, s2 = tj->sb * ti->cb - tj->cb * ti->sb;
      double h = s1 * s1 + ti->cy * tj->cy * s2 * s2;
      if (h > hc * (1.0 + 1e-9)) return 0.0;
      if (kernel == 0 && h < hc * (1.0 - 1e-9)) return 1.0;
      s1 = sin((yj - yi) / 2.0); s2 = sin((xj - xi) / 2.0);
      h = s1 * s1 + cos(yi) * cos(yj) * s2 * s2;
      double r = sqrt(h);
      d = 12752.0 * asin(r < 1.0 ? r : 1.0);
      if (!(d <= c)) return 0.0;
    } else {
      double q = dlat * dlat + (cbar * dlon) * (cbar * dlon);
      if (fabs(q - C2) <= 1e-9 * C2) {
        cbar = cos((yi + yj) / 2.0);
        q = dlat * dlat + (cbar * dlon) * (cbar * dlon);
      }
      if (!(q <= C2)) return 0.0;
      d = (111.0 * 180.0 / CL_PI5) * sqrt(q);
    }
    if (kernel == 0) return 1.0;
  }
  double w = 1.0 - d / c;
  return w > 0.0 ? w : 0.0;
}

/* first index in [lo, hi) of the sorted points whose x is >= v */
static int cl_lower(const int *ord, const double *x, int lo, int hi, double v) {
  while (lo < hi) {
    int m = lo + (hi - lo) / 2;
    if (x[ord[m]] < v) lo = m + 1; else hi = m;
  }
  return lo;
}

/* the block [start, end) of a key among the sorted distinct keys (-1 if none) */
static int cl_block(const long long *ukey, int nb, long long k) {
  int lo = 0, hi = nb;
  while (lo < hi) {
    int m = lo + (hi - lo) / 2;
    if (ukey[m] < k) lo = m + 1; else hi = m;
  }
  return lo < nb && ukey[lo] == k ? lo : -1;
}

/* The grid: n points (ya, xa in the grid's units; grp their groups or
 * NULL) in rows of height L above ymin (L = 0: one row), each (group, row)
 * a block of points sorted by x; key = group * nrow_max + row + 1. */
typedef struct {
  int nb;                           /* blocks */
  long long nrow_max;
  double h;                         /* the rows' height */
  int *row, *ord, *bstart, *iord;   /* row of each point; points in sorted order; block starts; 0..n-1 */
  long long *key, *ukey;            /* key of each point; the blocks' keys */
  double *xs;                       /* x in sorted order */
} cl_grid;

static void cl_grid_build(cl_grid *g, int n, const double *ya, const double *xa, const int *grp, double L,
                          double ymin) {
  int n1 = n > 0 ? n : 1;
  /* rows at least L high (a pair within the cutoff lies in one row or two
   * adjacent ones), and at most 1e7 rows: a tiny cutoff gets higher rows */
  double ymax = ymin;
  for (int i = 0; i < n; i++) if (ya[i] > ymax) ymax = ya[i];
  double h = L > 0.0 ? L : 1.0;
  if (L > 0.0 && (ymax - ymin) / h > 1e7) h = (ymax - ymin) / 1e7;
  g->h = h;
  g->nrow_max = 0;
  g->key = (long long *) R_alloc(n1, sizeof(long long));
  g->row = (int *) R_alloc(n1, sizeof(int));
  for (int i = 0; i < n; i++) {
    double r = L > 0.0 ? floor((ya[i] - ymin) / h) : 0.0;
    if (r > 1e9) error("internal error in conley.c: too many grid rows; please report");
    g->row[i] = (int) r;
    if (g->row[i] + 3 > g->nrow_max) g->nrow_max = g->row[i] + 3;
  }
  for (int i = 0; i < n; i++) g->key[i] = (long long) (grp ? grp[i] : 0) * g->nrow_max + g->row[i] + 1;
  g->ord = (int *) R_alloc(n1, sizeof(int));
  for (int i = 0; i < n; i++) g->ord[i] = i;
  cl_sort_ctx sc = {xa, ya, grp, g->key};
  cl_sctx = &sc;
  qsort(g->ord, n, sizeof(int), cl_cmp);
  cl_sctx = NULL;
  g->nb = 0;
  g->ukey = (long long *) R_alloc(n1, sizeof(long long));
  g->bstart = (int *) R_alloc(n + 1, sizeof(int));
  for (int p = 0; p < n; p++)
    if (p == 0 || g->key[g->ord[p]] != g->key[g->ord[p - 1]]) {
      g->ukey[g->nb] = g->key[g->ord[p]]; g->bstart[g->nb] = p; g->nb++;
    }
  g->bstart[g->nb] = n;
  g->xs = (double *) R_alloc(n1, sizeof(double));
  for (int p = 0; p < n; p++) g->xs[p] = xa[g->ord[p]];
  g->iord = (int *) R_alloc(n1, sizeof(int));
  for (int p = 0; p < n; p++) g->iord[p] = p;
}

/* the window [a0, a1) of block b's sorted points whose x is within wmax of
 * x + shift wv (0: none, 1: +2 pi, 2: -2 pi; on the sphere, a wide window:
 * the whole block) */
static void cl_window(const cl_grid *g, int b, int dist, double wmax, int wv, double x, int *a0, int *a1) {
  int s0 = g->bstart[b], s1 = g->bstart[b + 1];
  if (dist != 3 && wmax >= M_PI) { *a0 = s0; *a1 = s1; return; }
  double sh = wv == 0 ? 0.0 : (wv == 1 ? 2.0 * M_PI : -2.0 * M_PI);
  *a0 = cl_lower(g->iord, g->xs, s0, s1, x + sh - wmax);
  *a1 = cl_lower(g->iord, g->xs, s0, s1, nextafter(x + sh + wmax, R_PosInf));
}

/* the widest longitude difference (or x difference) of a point's pairs at
 * latitude y (radians), with a margin */
static double cl_wmax(int dist, double c, double L, double y) {
  double wmax;
  if (dist == 3) wmax = c;
  else {
    double am = fabs(y) + L;
    wmax = am >= M_PI / 2.0 - 1e-12 ? R_PosInf : L / cos(am);
  }
  return wmax * (1.0 + 1e-9) + 1e-12;
}

/* C_conley_meat(S, y, x, opts, grp, cl, unit, tt): S (n x k) the scores;
 * y, x latitude and longitude in degrees (dist 1, 2) or planar coordinates
 * (dist 3); opts (double): cutoff, dist, kernel, lag (< 0: no serial part),
 * spatial (0: the serial part only);
 * grp (integer, 0-based) the group of each row or NULL (one group); cl
 * (integer) the cluster of each row or NULL; unit (integer), tt (double)
 * for the serial part (lag >= 0). Returns the k x k meat without the
 * cluster part: with cl, the pairs of different clusters only (the caller
 * adds the cluster meat); without, the diagonal s_i s_i' included (with
 * the spatial part). */
SEXP C_conley_meat(SEXP S_, SEXP y_, SEXP x_, SEXP opts_, SEXP grp_, SEXP cl_, SEXP unit_, SEXP tt_) {
  const char *fn = "C_conley_meat";
  dd_chk_mat(S_, REALSXP, -1, -1, 0, fn, "S");
  int n = nrows(S_), k = ncols(S_);
  dd_chk_vec(y_, REALSXP, n, 0, fn, "y");
  dd_chk_vec(x_, REALSXP, n, 0, fn, "x");
  dd_chk_vec(opts_, REALSXP, 5, 0, fn, "opts");
  dd_chk_vec(grp_, INTSXP, n, 1, fn, "grp");
  dd_chk_vec(cl_, INTSXP, n, 1, fn, "cl");
  dd_chk_vec(unit_, INTSXP, n, 1, fn, "unit");
  dd_chk_vec(tt_, REALSXP, n, 1, fn, "tt");
  const double *o = REAL(opts_);
  double c = o[0];
  int dist = (int) o[1], kernel = (int) o[2];
  double lag = o[3];
  int spatial = o[4] != 0.0;
  if (!(c >= 0.0) || !R_FINITE(c) || dist < 1 || dist > 3 || kernel < 0 || kernel > 1 || ISNAN(lag))
    error("internal error in conley.c: bad options; please report");
  if (lag >= 0.0 && (isNull(unit_) || isNull(tt_)))
    error("internal error in conley.c: the serial part needs units and periods; please report");
  const double *S = REAL(S_), *yy = REAL(y_), *xx = REAL(x_);
  const int *grp = isNull(grp_) ? NULL : INTEGER(grp_), *clv = isNull(cl_) ? NULL : INTEGER(cl_);
  for (int i = 0; i < n; i++) {
    if (!R_FINITE(yy[i]) || !R_FINITE(xx[i])) error("internal error in conley.c: a missing coordinate; please report");
    if (grp && grp[i] < 0) error("internal error in conley.c: bad group; please report");
  }
  /* coordinates in the grid's units: radians for the spherical distances */
  double *ya = (double *) R_alloc(n > 0 ? n : 1, sizeof(double)), *xa = (double *) R_alloc(n > 0 ? n : 1, sizeof(double));
  for (int i = 0; i < n; i++) {
    ya[i] = dist == 3 ? yy[i] : yy[i] / 180.0 * M_PI;
    xa[i] = dist == 3 ? xx[i] : xx[i] / 180.0 * M_PI;
  }
  double L = dist == 3 ? c : ((c / 111.0) * CL_PI5) / 180.0;
  double C2 = (((c * CL_PI5) / 180.0) / 111.0) * (((c * CL_PI5) / 180.0) / 111.0);
  /* the haversine term of the cutoff: d <= c iff h <= sin(c / 12752)^2 (c < 12752 pi / 2) */
  double hc = c / 12752.0 < M_PI / 2.0 ? sin(c / 12752.0) * sin(c / 12752.0) : 1.0;
  cl_trig *tr = (cl_trig *) R_alloc(n > 0 ? n : 1, sizeof(cl_trig));
  if (dist != 3)
    for (int i = 0; i < n; i++) {
      tr[i].sa = sin(ya[i] / 2.0); tr[i].ca = cos(ya[i] / 2.0);
      tr[i].sb = sin(xa[i] / 2.0); tr[i].cb = cos(xa[i] / 2.0);
      tr[i].cy = cos(ya[i]);
    }
  /* rows of width L (a zero cutoff: rows of the exact coordinate) */
  double ymin = R_PosInf;
  for (int i = 0; i < n; i++) if (ya[i] < ymin) ymin = ya[i];
  cl_grid gr;
  cl_grid_build(&gr, n, ya, xa, grp, L, ymin);
  const int *row = gr.row, *ord = gr.ord;
  const long long *key = gr.key, *ukey = gr.ukey;
  int nb = gr.nb;
  /* v_i = sum_j w_ij s_j over the neighbours j of other clusters that come
   * after i in sorted order (M = sum_i s_i v_i' + v_i s_i' + diagonal) */
  double *V = (double *) R_alloc((size_t) (n > 0 ? n : 1) * k, sizeof(double));
  memset(V, 0, sizeof(double) * (size_t) n * k);
  int nth = dd_nthreads(n, (double) n * 32.0);
  dd_chunks ch;
  dd_chunks_init(&ch, spatial ? n : 0, nth);
  while (dd_chunks_next(&ch)) {
    const int lo_ = ch.lo, hi_ = ch.hi;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 256)
#endif
    for (int p = lo_; p < hi_; p++) {
      int i = ord[p];
      double wmax = cl_wmax(dist, c, L, ya[i]);
      long long base = key[i] - row[i] - 1;
      for (int dr = 0; dr <= 1; dr++) {   /* each pair once: from its first point in sorted order */
        int rr = row[i] + dr;
        if (rr < 0) continue;
        int b = cl_block(ukey, nb, base + rr + 1);
        if (b < 0) continue;
        /* the windows: around x_i and, on the sphere, shifted by a turn */
        int nwin = (dist == 3 || wmax >= M_PI) ? 1 : 3;
        for (int wv = 0; wv < nwin; wv++) {
          int a0, a1;
          cl_window(&gr, b, dist, wmax, wv, xa[i], &a0, &a1);
          if (dr == 0 && a0 <= p) a0 = p + 1;
          for (int q = a0; q < a1; q++) {
            int j = ord[q];
            if (j == i || (clv && clv[j] == clv[i])) continue;
            double w = cl_weight(dist, kernel, c, L, C2, hc, ya[i], xa[i], ya[j], xa[j], tr + i, tr + j);
            if (w == 0.0) continue;
            for (int a = 0; a < k; a++) V[(size_t) i * k + a] += w * S[j + (size_t) a * n];
          }
        }
      }
    }
  }
  SEXP M_ = PROTECT(allocMatrix(REALSXP, k, k));
  double *M = REAL(M_);
  memset(M, 0, sizeof(double) * (size_t) k * k);
  double tl = -1.0;
  for (int i = 0; i < n; i++) {
    if ((i & 65535) == 0) dd_check_interrupt(&tl);
    for (int a = 0; a < k; a++) {
      double sa = S[i + (size_t) a * n];
      if (sa == 0.0) continue;
      for (int b = 0; b < k; b++)
        M[a + (size_t) b * k] += sa * (V[(size_t) i * k + b] + (clv || !spatial ? 0.0 : S[i + (size_t) b * n]));
    }
    for (int b = 0; b < k; b++) {
      double sb = S[i + (size_t) b * n];
      if (sb == 0.0) continue;
      for (int a = 0; a < k; a++) M[a + (size_t) b * k] += V[(size_t) i * k + a] * sb;
    }
  }
  /* the serial part: a unit's own periods within the lag */
  if (lag >= 0.0) {
    const int *un = INTEGER(unit_);
    const double *tt = REAL(tt_);
    int *uo = (int *) R_alloc(n > 0 ? n : 1, sizeof(int));
    long long *ukey2 = (long long *) R_alloc(n > 0 ? n : 1, sizeof(long long));
    for (int i = 0; i < n; i++) { uo[i] = i; ukey2[i] = un[i]; }
    cl_sort_ctx s2 = {tt, tt, NULL, ukey2};
    cl_sctx = &s2;
    qsort(uo, n, sizeof(int), cl_cmp);
    cl_sctx = NULL;
    for (int p = 0; p < n; p++) {
      if ((p & 65535) == 0) dd_check_interrupt(&tl);
      int i = uo[p];
      for (int q = p + 1; q < n; q++) {
        int j = uo[q];
        if (un[j] != un[i]) break;
        double dt = fabs(tt[j] - tt[i]);
        if (dt > lag) break;
        if (dt == 0.0 || (clv && clv[j] == clv[i])) continue;
        double w = 1.0 - dt / (lag + 1.0);
        for (int a = 0; a < k; a++)
          for (int b = 0; b < k; b++)
            M[a + (size_t) b * k] += w * (S[i + (size_t) a * n] * S[j + (size_t) b * n] +
                                          S[j + (size_t) a * n] * S[i + (size_t) b * n]);
      }
    }
  }
  UNPROTECT(1);
  return M_;
}

/* The distance of a pair in km (dist 1, 2) or the coordinates' units (3),
 * by the expressions of cl_weight (fixest's), when the pair passes the
 * pre-filter and is within the cutoff c; +Inf otherwise. Radians for 1, 2. */
static double cl_dist(int dist, double c, double L, double C2, double yi, double xi, double yj, double xj) {
  double d;
  if (dist == 3) {
    double dx = xj - xi, dy = yj - yi;
    d = sqrt(dx * dx + dy * dy);
  } else {
    double dlat = fabs(yj - yi);
    if (dlat > L) return R_PosInf;
    double dlon0 = fabs(xj - xi);
    double dlon = dlon0 < CL_PI5 ? dlon0 : 6.28318 - dlon0;
    double cbar = cos((yi + yj) / 2.0);
    if (dlon > L / cbar) return R_PosInf;
    if (dist == 1) {
      double s1 = sin((yj - yi) / 2.0), s2 = sin((xj - xi) / 2.0);
      double r = sqrt(s1 * s1 + cos(yi) * cos(yj) * s2 * s2);
      d = 12752.0 * asin(r < 1.0 ? r : 1.0);
    } else {
      double q = dlat * dlat + (cbar * dlon) * (cbar * dlon);
      if (!(q <= C2)) return R_PosInf;
      d = (111.0 * 180.0 / CL_PI5) * sqrt(q);
    }
  }
  return d <= c ? d : R_PosInf;
}

/* C_spill_nearest(y, x, lab, opts): for n units at (y, x) (degrees for dist
 * 1, 2; planar for 3) with labels lab (0-based cohort, or -1: not treated),
 * the n x G matrix (G = opts[2]) of each unit's distance to the nearest
 * other unit of each label within the cutoff opts[0] (+Inf: none);
 * opts[1] the distance (1 spherical, 2 triangular, 3 euclidean). Each
 * unit's neighbours are searched in the three grid rows around it, in
 * parallel over units (each writes its own row of the result). */
SEXP C_spill_nearest(SEXP y_, SEXP x_, SEXP lab_, SEXP opts_) {
  const char *fn = "C_spill_nearest";
  dd_chk_type(y_, REALSXP, 0, fn, "y");
  int n = LENGTH(y_);
  dd_chk_vec(x_, REALSXP, n, 0, fn, "x");
  dd_chk_vec(lab_, INTSXP, n, 0, fn, "lab");
  dd_chk_vec(opts_, REALSXP, 3, 0, fn, "opts");
  const double *o = REAL(opts_);
  double c = o[0];
  int dist = (int) o[1];
  double Gd = o[2];
  if (!(c > 0.0) || !R_FINITE(c) || dist < 1 || dist > 3 || !(Gd >= 1.0) || Gd > 1e6)
    error("internal error in conley.c: bad options; please report");
  int G = (int) Gd;
  const double *yy = REAL(y_), *xx = REAL(x_);
  const int *lab = INTEGER(lab_);
  int nt = 0;
  for (int i = 0; i < n; i++) {
    if (!R_FINITE(yy[i]) || !R_FINITE(xx[i])) error("internal error in conley.c: a missing coordinate; please report");
    if (lab[i] < -1 || lab[i] >= G) error("internal error in conley.c: bad label; please report");
    if (lab[i] >= 0) nt++;
  }
  double *ya = (double *) R_alloc(n > 0 ? n : 1, sizeof(double)), *xa = (double *) R_alloc(n > 0 ? n : 1, sizeof(double));
  for (int i = 0; i < n; i++) {
    ya[i] = dist == 3 ? yy[i] : yy[i] / 180.0 * M_PI;
    xa[i] = dist == 3 ? xx[i] : xx[i] / 180.0 * M_PI;
  }
  double L = dist == 3 ? c : ((c / 111.0) * CL_PI5) / 180.0;
  double C2 = (((c * CL_PI5) / 180.0) / 111.0) * (((c * CL_PI5) / 180.0) / 111.0);
  /* the grid of the labelled units (rows above the lowest of all units) */
  double ymin = R_PosInf;
  for (int i = 0; i < n; i++) if (ya[i] < ymin) ymin = ya[i];
  int *tix = (int *) R_alloc(nt > 0 ? nt : 1, sizeof(int));
  double *ty = (double *) R_alloc(nt > 0 ? nt : 1, sizeof(double)), *tx = (double *) R_alloc(nt > 0 ? nt : 1, sizeof(double));
  for (int i = 0, m = 0; i < n; i++)
    if (lab[i] >= 0) { tix[m] = i; ty[m] = ya[i]; tx[m] = xa[i]; m++; }
  cl_grid gr;
  cl_grid_build(&gr, nt, ty, tx, NULL, L, ymin);
  SEXP D_ = PROTECT(allocMatrix(REALSXP, n, G));
  double *D = REAL(D_);
  for (size_t i = 0; i < (size_t) n * G; i++) D[i] = R_PosInf;
  double h = gr.h;
  int nth = dd_nthreads(n, (double) n * 32.0);
  dd_chunks ch;
  dd_chunks_init(&ch, n, nth);
  while (dd_chunks_next(&ch)) {
    const int lo_ = ch.lo, hi_ = ch.hi;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 256)
#endif
    for (int i = lo_; i < hi_; i++) {
      double wmax = cl_wmax(dist, c, L, ya[i]);
      double rq = floor((ya[i] - ymin) / h);
      int nwin = (dist == 3 || wmax >= M_PI) ? 1 : 3;
      for (int dr = -1; dr <= 1; dr++) {
        double rr = rq + dr;
        if (rr < 0.0 || rr + 3.0 > (double) gr.nrow_max) continue;
        int b = cl_block(gr.ukey, gr.nb, (long long) rr + 1);
        if (b < 0) continue;
        for (int wv = 0; wv < nwin; wv++) {
          int a0, a1;
          cl_window(&gr, b, dist, wmax, wv, xa[i], &a0, &a1);
          for (int q = a0; q < a1; q++) {
            int j = tix[gr.ord[q]];
            if (j == i) continue;
            double d = cl_dist(dist, c, L, C2, ya[i], xa[i], ya[j], xa[j]);
            double *cell = D + i + (size_t) lab[j] * n;
            if (d < *cell) *cell = d;
          }
        }
      }
    }
  }
  UNPROTECT(1);
  return D_;
}
