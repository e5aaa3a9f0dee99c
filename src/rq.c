/* Linear quantile regression: b minimising sum_i w_i rho_tau(y_i - x_i'b),
 * rho_tau(u) = u (tau - [u < 0]), weights w_i >= 0 (integer resampling
 * counts in did_cic's bootstrap; 1 otherwise).
 *
 * The solution is a vertex: p observations (the basis h, X_h nonsingular)
 * with zero residual, b = X_h^{-1} y_h, computed by an LU solve of that
 * p x p system (LAPACK dgetrf/dgetrs), so that b is the exact vertex, as the
 * simplex of Barrodale and Roberts (quantreg's rq(method = "br")) returns
 * it. The search is an exterior-point simplex on the bases, as theirs:
 *   - at basis h, with a = -X_h^{-T} g, g = sum over the other observations
 *     of w_i psi_i x_i (psi_i = tau for a positive residual, tau - 1 for a
 *     negative one), releasing basis observation j upwards (its residual
 *     becoming negative, s = +1) or downwards (s = -1) changes the objective
 *     at the rate D(j, s) = s a_j + w_j (1 - tau or tau) plus, for the
 *     other observations whose residual is zero (a degenerate vertex),
 *     w_k rho_tau(-s (X_h^{-T} x_k)_j);
 *   - if no D is negative the vertex is optimal; otherwise the most
 *     negative edge is followed to the minimum of the objective along it (a
 *     weighted median of the breakpoints r_i / x_i'd, found with a heap: the
 *     step passes through as many vertices as improve, as Barrodale and
 *     Roberts' does), and the observation met there enters the basis.
 * Every step lowers the objective (no cycling). When the minimiser is
 * unique (continuous outcomes and covariates: almost surely) it is the
 * vertex quantreg returns; when it is not (a flat objective along an edge
 * at the optimum, e.g. an intercept-only fit with n tau an integer), this
 * returns one optimal vertex, which need not be quantreg's choice.
 * A grid of tau is solved in increasing order, each fit starting from the
 * previous one's basis (every basis is a vertex of this unconstrained
 * problem, so any basis is a valid start).
 *
 * Entry point: C_rq. Kernels used by cic.c: dd_rq_work_init, dd_rq_start,
 * dd_rq_fit. No R API inside the kernels except R_alloc at setup. */
#include "diffdiff.h"
#include <math.h>

/* scratch for n rows and p columns */
void dd_rq_work_init(dd_rq_work *W, int n, int p) {
  W->n = n; W->p = p;
  W->r = (double *) R_alloc((size_t) n, sizeof(double));
  W->xd = (double *) R_alloc((size_t) n, sizeof(double));
  W->yp = (double *) R_alloc((size_t) n, sizeof(double));
  W->kt = (double *) R_alloc((size_t) n, sizeof(double));
  W->ki = (int *) R_alloc((size_t) n, sizeof(int));
  W->fl = (int *) R_alloc((size_t) n, sizeof(int));
  W->act = (char *) R_alloc((size_t) n, sizeof(char));
  W->deg = (int *) R_alloc((size_t) n, sizeof(int));
  W->inb = (int *) R_alloc((size_t) n, sizeof(int));
  W->lu = (double *) R_alloc((size_t) p * p, sizeof(double));
  W->v = (double *) R_alloc((size_t) p, sizeof(double));
  W->a = (double *) R_alloc((size_t) p, sizeof(double));
  W->q = (double *) R_alloc((size_t) p * p + (size_t) p, sizeof(double));
  W->dx = (double *) R_alloc((size_t) p * n, sizeof(double));
  W->ipiv = (int *) R_alloc((size_t) p, sizeof(int));
  for (int i = 0; i < n; i++) W->inb[i] = -1;
}

/* A starting basis: p rows of positive weight with linearly independent
 * covariates, chosen greedily (each time the row farthest from the span of
 * those chosen, by Gram-Schmidt). Returns 0, or -1 when the rows of
 * positive weight have rank < p (relative tolerance 1e-9). */
int dd_rq_start(dd_rq_work *W, const double *X, int ldx, const double *w, int *h) {
  const int n = W->n, p = W->p;
  double *Q = W->q;              /* p x p: orthonormal directions, by column */
  double *rem = W->kt;           /* squared norm of what is left of each row */
  double *orig = W->xd;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int k = 0; k < p; k++) s += X[i + (size_t) ldx * k] * X[i + (size_t) ldx * k];
    rem[i] = (w[i] > 0) ? s : -1.0;
    orig[i] = s;
  }
  for (int c = 0; c < p; c++) {
    int best = -1;
    double bv = 0;
    for (int i = 0; i < n; i++)
      if (rem[i] > bv && rem[i] > 1e-18 * orig[i]) { bv = rem[i]; best = i; }
    if (best < 0 || bv <= 1e-18 * orig[best] || bv <= 0) return -1;
    /* the new direction: row best minus its projection */
    double *qc = Q + (size_t) p * c;
    for (int k = 0; k < p; k++) qc[k] = X[best + (size_t) ldx * k];
    for (int e = 0; e < c; e++) {
      const double *qe = Q + (size_t) p * e;
      double d = 0;
      for (int k = 0; k < p; k++) d += qc[k] * qe[k];
      for (int k = 0; k < p; k++) qc[k] -= d * qe[k];
    }
    double nr = 0;
    for (int k = 0; k < p; k++) nr += qc[k] * qc[k];
    nr = sqrt(nr);
    if (!(nr > 1e-9 * sqrt(orig[best]))) return -1;
    for (int k = 0; k < p; k++) qc[k] /= nr;
    h[c] = best;
    for (int i = 0; i < n; i++) {
      if (rem[i] <= 0) continue;
      double d = 0;
      for (int k = 0; k < p; k++) d += X[i + (size_t) ldx * k] * qc[k];
      rem[i] -= d * d;
      if (rem[i] < 0) rem[i] = 0;
    }
    rem[best] = -1.0;
  }
  return 0;
}

/* out[i] = sum_k X[i, k] v[k], i < n (column by column: the same sums, in
 * the same order, as row by row) */
static void rq_xv(const double *X, int ldx, int n, int p, const double *v, double *out) {
  memset(out, 0, (size_t) n * sizeof(double));
  for (int k = 0; k < p; k++) {
    const double vk = v[k], *xk = X + (size_t) ldx * k;
    if (vk == 0) continue;
    for (int i = 0; i < n; i++) out[i] += xk[i] * vk;
  }
}

/* heap of breakpoints (time kt[.], observation ki[.]), smallest time on top */
static void heap_down(double *t, int *id, int m, int i) {
  for (;;) {
    int l = 2 * i + 1, s = i;
    if (l < m && (t[l] < t[s] || (t[l] == t[s] && id[l] < id[s]))) s = l;
    if (l + 1 < m && (t[l + 1] < t[s] || (t[l + 1] == t[s] && id[l + 1] < id[s]))) s = l + 1;
    if (s == i) return;
    double tt = t[i]; t[i] = t[s]; t[s] = tt;
    int ii = id[i]; id[i] = id[s]; id[s] = ii;
    i = s;
  }
}

/* factor X_h; 0 on success */
static int rq_factor(dd_rq_work *W, const double *X, int ldx, const int *h) {
  const int p = W->p;
  int info = 0;
  for (int j = 0; j < p; j++)
    for (int k = 0; k < p; k++) W->lu[j + (size_t) p * k] = X[h[j] + (size_t) ldx * k];
  F77_CALL(dgetrf)(&p, &p, W->lu, &p, W->ipiv, &info);
  return info != 0;
}

static void rq_solve(dd_rq_work *W, const char *tr, double *rhs, int nrhs) {
  const int p = W->p;
  int info = 0;
  F77_CALL(dgetrs)(tr, &p, &nrhs, W->lu, &p, W->ipiv, rhs, &p, &info FCONE);
}

/* residuals of the perturbed outcomes at the basis h (factored in W->lu),
 * b the vertex; the rate vector g (W->v) of the observations off the basis
 * with a nonzero residual; those with a zero residual (|r| <= ztol) listed
 * in W->deg. Returns their number. */
static int rq_refresh(dd_rq_work *W, const double *X, int ldx, const double *yp, const double *w, double tau,
                      const int *h, double *b, double ztol) {
  const int n = W->n, p = W->p;
  double *r = W->r, *g = W->v;
  const int *inb = W->inb;
  for (int j = 0; j < p; j++) b[j] = yp[h[j]];
  rq_solve(W, "N", b, 1);
  int ndeg = 0;
  double *ps = W->xd;
  rq_xv(X, ldx, n, p, b, r);
  for (int i = 0; i < n; i++) {
    ps[i] = 0;
    W->act[i] = 0;
    if (inb[i] >= 0) { r[i] = 0; continue; }
    const double ri = yp[i] - r[i];
    if (fabs(ri) <= ztol) {
      r[i] = 0;
      if (w[i] > 0) W->deg[ndeg++] = i;
      continue;
    }
    r[i] = ri;
    W->act[i] = (w[i] > 0);
    if (w[i] > 0) ps[i] = w[i] * (ri > 0 ? tau : tau - 1.0);
  }
  for (int k = 0; k < p; k++) {
    const double *xk = X + (size_t) ldx * k;
    double s = 0;
    for (int i = 0; i < n; i++) s += ps[i] * xk[i];
    g[k] = s;
  }
  return ndeg;
}

/* Fit at tau from the basis h (updated in place); b (p) the coefficients.
 * Returns the number of pivots, or -1 (a singular basis: the rows of
 * positive weight do not have rank p; or no finite minimum). Between
 * pivots the residuals and the rate vector are updated (the observations
 * whose residual changed sign, the one leaving and the one entering the
 * basis), and recomputed from the vertex every 50 pivots, whenever a
 * residual off the basis reaches zero, and before optimality is accepted. */
int dd_rq_fit(dd_rq_work *W, const double *X, int ldx, const double *y, const double *w, double tau, int *h,
              double *b) {
  const int n = W->n, p = W->p;
  double *r = W->r, *xd = W->xd, *a = W->a, *g = W->v, *yp = W->yp, *dv = W->q;
  int *inb = W->inb, *deg = W->deg, *fl = W->fl;
  double wsum = 0, ymax = 0;
  for (int i = 0; i < n; i++) {
    wsum += w[i];
    if (fabs(y[i]) > ymax) ymax = fabs(y[i]);
  }
  const double dtol = 1e-11 * (1.0 + wsum);       /* a negative rate */
  const double ztol = 1e-14 * (1.0 + ymax);       /* a zero residual */
  const int maxit = 100 + 20 * (n + p);
  int it = 0, status = -1;
  double delta = 1e-7 * (1.0 + ymax);
  for (int j = 0; j < p; j++) inb[h[j]] = j;
  for (int round = 0; round < 6; round++, delta *= 1e-3) {
    /* the perturbed outcomes: distinct offsets in (0, delta) */
    for (int i = 0; i < n; i++) {
      const double z = (double) (i + 1) * 0.6180339887498949;
      yp[i] = y[i] + delta * (0.05 + 0.9 * (z - floor(z)));
    }
    status = -1;
    if (rq_factor(W, X, ldx, h)) goto done;
    int ndeg = rq_refresh(W, X, ldx, yp, w, tau, h, b, ztol), fresh = 1, since = 0;
    for (;;) {
      for (int k = 0; k < p; k++) a[k] = -g[k];
      rq_solve(W, "T", a, 1);
      double *dx = W->dx;
      if (ndeg) {
        for (int m = 0; m < ndeg; m++)
          for (int k = 0; k < p; k++) dx[k + (size_t) p * m] = X[deg[m] + (size_t) ldx * k];
        rq_solve(W, "T", dx, ndeg);
      }
      int jbest = -1, sbest = 0;
      double dbest = -dtol;
      for (int j = 0; j < p; j++) {
        const double wj = w[h[j]];
        for (int s = 1; s >= -1; s -= 2) {
          double D = s * a[j] + wj * (s > 0 ? 1.0 - tau : tau);
          for (int m = 0; m < ndeg; m++) {
            const double u = -s * dx[j + (size_t) p * m];
            D += w[deg[m]] * u * (u < 0 ? tau - 1.0 : tau);
          }
          if (D < dbest) { dbest = D; jbest = j; sbest = s; }
        }
      }
      if (jbest < 0) {
        if (fresh) { status = it; break; }
        ndeg = rq_refresh(W, X, ldx, yp, w, tau, h, b, ztol);
        fresh = 1; since = 0;
        continue;
      }
      if (++it > maxit) goto done;
      /* the edge d = X_h^{-1} (s e_j) and the breakpoints along it */
      for (int k = 0; k < p; k++) dv[k] = (k == jbest) ? (double) sbest : 0.0;
      rq_solve(W, "N", dv, 1);
      int m = 0;
      rq_xv(X, ldx, n, p, dv, xd);
      /* breakpoints t = r / x'd > 0 of the active observations (positive
       * weight, off the basis, nonzero residual), compacted without
       * branches */
      for (int i = 0; i < n; i++) {
        const double f = xd[i];
        const double t = (f != 0) ? r[i] / f : -1.0;
        W->kt[m] = t; W->ki[m] = i;
        m += (t > 0) & (W->act[i] != 0);
      }
      double slope = dbest, tstar = 0;
      int enter = -1, nfl = 0;
      /* the K smallest first (a bounded max-heap: most breakpoints are
       * rejected by one comparison); if the minimum lies beyond them, all
       * breakpoints in a min-heap */
      enum { KS = 48 };
      double st[KS];
      int si[KS], ns = 0;
      for (int q = 0; q < m; q++) {
        const double t = W->kt[q];
        const int i = W->ki[q];
        if (ns < KS) {
          int c = ns++;
          while (c > 0) {                          /* sift up (max-heap, ties: larger index on top) */
            const int pa = (c - 1) / 2;
            if (st[pa] > t || (st[pa] == t && si[pa] > i)) break;
            st[c] = st[pa]; si[c] = si[pa]; c = pa;
          }
          st[c] = t; si[c] = i;
        } else if (t < st[0] || (t == st[0] && i < si[0])) {
          int c = 0;                               /* replace the top, sift down */
          for (;;) {
            const int l = 2 * c + 1;
            if (l >= KS) break;
            int b2 = l;
            if (l + 1 < KS && (st[l + 1] > st[l] || (st[l + 1] == st[l] && si[l + 1] > si[l]))) b2 = l + 1;
            if (st[b2] < t || (st[b2] == t && si[b2] < i)) break;
            st[c] = st[b2]; si[c] = si[b2]; c = b2;
          }
          st[c] = t; si[c] = i;
        }
      }
      /* the kept ones in ascending order (insertion sort of <= KS) */
      for (int a1 = 1; a1 < ns; a1++) {
        const double t = st[a1]; const int i = si[a1];
        int c = a1;
        while (c > 0 && (st[c - 1] > t || (st[c - 1] == t && si[c - 1] > i))) { st[c] = st[c - 1]; si[c] = si[c - 1]; c--; }
        st[c] = t; si[c] = i;
      }
      for (int q = 0; q < ns; q++) {
        const int i = si[q];
        slope += w[i] * fabs(xd[i]);
        if (slope >= 0) { enter = i; tstar = st[q]; break; }
        fl[nfl++] = i;                            /* passed: its residual changes sign */
      }
      if (enter < 0 && ns == KS && m > KS) {
        /* beyond the K smallest: start again over all, in a min-heap */
        slope = dbest; nfl = 0;
        for (int q = m / 2 - 1; q >= 0; q--) heap_down(W->kt, W->ki, m, q);
        while (m > 0) {
          const int i = W->ki[0];
          slope += w[i] * fabs(xd[i]);
          if (slope >= 0) { enter = i; tstar = W->kt[0]; break; }
          fl[nfl++] = i;
          m--;
          W->kt[0] = W->kt[m]; W->ki[0] = W->ki[m];
          heap_down(W->kt, W->ki, m, 0);
        }
      }
      if (enter < 0) goto done;                   /* unbounded: cannot happen with rank p */
      /* the rate vector: passed observations, the leaving and the entering one */
      for (int q = 0; q < nfl; q++) {
        const int i = fl[q];
        const double c = r[i] > 0 ? -w[i] : w[i];  /* psi: tau <-> tau - 1 */
        for (int k = 0; k < p; k++) g[k] += c * X[i + (size_t) ldx * k];
      }
      const int leave = h[jbest];
      const double cl = w[leave] * (sbest > 0 ? tau - 1.0 : tau);
      const double ce = -w[enter] * (r[enter] > 0 ? tau : tau - 1.0);
      for (int k = 0; k < p; k++)
        g[k] += cl * X[leave + (size_t) ldx * k] + ce * X[enter + (size_t) ldx * k];
      int zero = 0;
      for (int i = 0; i < n; i++) {
        r[i] -= tstar * xd[i];
        if (inb[i] < 0 && i != enter && w[i] > 0 && fabs(r[i]) <= ztol) zero = 1;
      }
      r[enter] = 0;
      inb[leave] = -1;
      h[jbest] = enter;
      inb[enter] = jbest;
      W->act[enter] = 0;
      W->act[leave] = (w[leave] > 0 && r[leave] != 0);
      if (rq_factor(W, X, ldx, h)) goto done;
      fresh = 0;
      if (zero || ++since >= 50) {
        ndeg = rq_refresh(W, X, ldx, yp, w, tau, h, b, ztol);
        fresh = 1; since = 0;
      } else ndeg = 0;
    }
    /* the vertex of the unperturbed outcomes at this basis; it is optimal
     * if every residual that is not zero has the sign it has under the
     * perturbation (the signs chosen for the zero residuals then certify
     * it); otherwise the perturbation was too large: shrink it, go on.
     * (The basis in ascending order of observations, so that one vertex
     * gives the same b bit for bit whatever the path to it.) */
    int *hs = W->ki;
    for (int j = 0; j < p; j++) {
      int k = j;
      while (k > 0 && hs[k - 1] > h[j]) { hs[k] = hs[k - 1]; k--; }
      hs[k] = h[j];
    }
    if (rq_factor(W, X, ldx, hs)) { status = -1; goto done; }
    for (int j = 0; j < p; j++) b[j] = y[hs[j]];
    rq_solve(W, "N", b, 1);
    int agree = 1;
    const double ztol0 = 1e-12 * (1.0 + ymax);
    rq_xv(X, ldx, n, p, b, xd);
    for (int i = 0; i < n && agree; i++) {
      if (inb[i] >= 0 || w[i] <= 0) continue;
      const double r0 = y[i] - xd[i];
      if (fabs(r0) > ztol0 && ((r0 > 0) != (r[i] > 0) || r[i] == 0)) agree = 0;
    }
    if (agree) break;
    status = -1;
  }
done:
  for (int j = 0; j < p; j++) inb[h[j]] = -1;
  return status;
}

/* C_rq(X, y, w, taus): X an n x p matrix (no missing values), y (n), w
 * (n, >= 0), taus increasing in (0, 1). Returns the p x length(taus)
 * coefficient matrix; an error when the rows of positive weight have rank
 * below p. */
SEXP C_rq(SEXP X_, SEXP y_, SEXP w_, SEXP taus_) {
  const char *fn = "C_rq";
  dd_chk_type(X_, REALSXP, 0, fn, "X");
  SEXP dim = getAttrib(X_, R_DimSymbol);
  if (TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2) dd_bad(fn, "X", "must be a matrix");
  const int n = INTEGER(dim)[0], p = INTEGER(dim)[1];
  if (n < 1 || p < 1) dd_bad(fn, "X", "must have rows and columns");
  if (p > n) dd_bad(fn, "X", "must have at least as many rows as columns");
  dd_chk_finite(X_, 0, fn, "X");
  dd_chk_vec(y_, REALSXP, n, 0, fn, "y");
  dd_chk_finite(y_, 0, fn, "y");
  dd_chk_vec(w_, REALSXP, n, 0, fn, "w");
  dd_chk_finite(w_, 0, fn, "w");
  const double *w = REAL(w_);
  for (int i = 0; i < n; i++)
    if (w[i] < 0) dd_bad(fn, "w", "must be nonnegative");
  dd_chk_type(taus_, REALSXP, 0, fn, "taus");
  dd_chk_finite(taus_, 0, fn, "taus");
  const int nt = (int) XLENGTH(taus_);
  const double *taus = REAL(taus_);
  for (int k = 0; k < nt; k++) {
    if (!(taus[k] > 0 && taus[k] < 1)) dd_bad(fn, "taus", "must lie strictly between 0 and 1");
    if (k > 0 && taus[k] <= taus[k - 1]) dd_bad(fn, "taus", "must be strictly increasing");
  }
  dd_rq_work W;
  dd_rq_work_init(&W, n, p);
  int *h = (int *) R_alloc((size_t) p, sizeof(int));
  if (dd_rq_start(&W, REAL(X_), n, w, h))
    error("C_rq: the rows of positive weight of X have rank below %d (collinear columns)", p);
  SEXP out = PROTECT(allocMatrix(REALSXP, p, nt));
  double t_last = -1.0;
  for (int k = 0; k < nt; k++) {
    dd_check_interrupt(&t_last);
    if (dd_rq_fit(&W, REAL(X_), n, REAL(y_), w, taus[k], h, REAL(out) + (size_t) p * k) < 0)
      error("C_rq: no solution at tau = %g (collinear columns among the rows of positive weight)", taus[k]);
  }
  UNPROTECT(1);
  return out;
}
