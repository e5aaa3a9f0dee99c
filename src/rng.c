/* Counter-based random numbers for the bootstraps. A 64-bit seed is taken from
 * R's RNG (so set.seed() reproduces results); every replicate b gets its own
 * stream (seed, b), so any thread may compute any replicate and the result
 * does not depend on the thread count. The generator is splitmix64. */
#include "diffdiff.h"
#include <math.h>

#define mix64 dd_mix64

void dd_rng_init(dd_rng *g, uint64_t seed, uint64_t stream) {
  g->s = mix64(seed ^ mix64(stream + 0x9E3779B97F4A7C15ULL));
}

uint64_t dd_rng_next(dd_rng *g) { return dd_rng_step(g); }

/* uniform on [0, 1) with 53 random bits */
double dd_rng_unif(dd_rng *g) {
  return dd_u01(dd_rng_next(g));
}

/* Two draws from R's RNG make the seed; the caller brackets with
 * GetRNGstate()/PutRNGstate(). */
uint64_t dd_seed_from_R(void) {
  uint64_t hi = (uint64_t) floor(unif_rand() * 4294967296.0);
  uint64_t lo = (uint64_t) floor(unif_rand() * 4294967296.0);
  return (hi << 32) ^ lo;
}

/* The bootstrap seed: drawn from R's RNG as dd_seed_from_R() when seed_ is
 * NULL, otherwise given as c(hi, lo), two whole numbers in [0, 2^32) (what R
 * computes as floor(runif(2) * 2^32): the same seed, so a bootstrap run in
 * batches -- each call given the seed and its first replicate -- reproduces
 * one call replicate for replicate). */
uint64_t dd_seed_arg(SEXP seed_, const char *fn) {
  if (isNull(seed_)) {
    GetRNGstate();
    uint64_t s = dd_seed_from_R();
    PutRNGstate();
    return s;
  }
  if (TYPEOF(seed_) != REALSXP || XLENGTH(seed_) != 2) error("internal error in %s: `seed` must be NULL or two numbers; please report", fn);
  const double *v = REAL(seed_);
  for (int i = 0; i < 2; i++)
    if (ISNAN(v[i]) || v[i] != floor(v[i]) || v[i] < 0 || v[i] >= 4294967296.0)
      error("internal error in %s: `seed` must hold whole numbers in [0, 2^32); please report", fn);
  return ((uint64_t) v[0] << 32) ^ (uint64_t) v[1];
}

/* Bootstrap weights with mean 0 and variance 1 (the draws: dd_rademacher_bit,
 * dd_mammen_draw, dd_webb_draw in diffdiff.h).
 * type 1 Rademacher: +-1 with probability 1/2;
 * type 2 Mammen: -(sqrt5-1)/2 w.p. (sqrt5+1)/(2 sqrt5), else (sqrt5+1)/2;
 * type 3 Webb: +-sqrt(3/2), +-1, +-sqrt(1/2), each w.p. 1/6. */
const double dd_webb_values[6] = {-1.224744871391589, -1.0, -0.7071067811865476,
                                  0.7071067811865476, 1.0, 1.224744871391589};
/* A stream of weights, one at a time, in the order dd_boot_weights fills
 * them (so both give the same weights for the same (seed, stream)). */
void dd_wstream_init(dd_wstream *s, uint64_t seed, uint64_t stream, int type) {
  dd_rng_init(&s->g, seed, stream);
  s->type = type; s->pos = 0; s->bits = 0;
}

double dd_wstream_next(dd_wstream *s) {
  double v;
  switch (s->type) {
  case 1:                               /* Rademacher: 64 signs from each draw */
    if ((s->pos & 63) == 0) s->bits = dd_rng_next(&s->g);
    v = dd_rademacher_bit(s->bits, (int) (s->pos & 63));
    break;
  case 2: v = dd_mammen_draw(dd_rng_next(&s->g)); break;
  case 3: v = dd_webb_draw(dd_rng_next(&s->g)); break;
  default: v = 0.0;
  }
  s->pos++;
  return v;
}

void dd_boot_weights(dd_rng *g, int type, double *v, int G) {
  dd_wstream s;
  s.g = *g; s.type = type; s.pos = 0; s.bits = 0;
  for (int i = 0; i < G; i++) v[i] = dd_wstream_next(&s);
  *g = s.g;
}

/* G x B matrix of weights, for tests of the weight distributions. */
SEXP C_boot_weights(SEXP G_, SEXP B_, SEXP type_) {
  const char *fn = "C_boot_weights";
  int G = dd_chk_int(G_, 0, DD_INT_MAX, fn, "G"), B = dd_chk_int(B_, 0, DD_INT_MAX, fn, "B");
  int type = dd_chk_int(type_, 1, 3, fn, "type");
  if ((double) G * B > 1e8) error("internal error in %s: `G` x `B` too large; please report", fn);
  SEXP out = PROTECT(allocMatrix(REALSXP, G, B));
  GetRNGstate();
  uint64_t seed = dd_seed_from_R();
  PutRNGstate();
  for (int b = 0; b < B; b++) {
    dd_rng g;
    dd_rng_init(&g, seed, (uint64_t) b);
    dd_boot_weights(&g, type, REAL(out) + (R_xlen_t) b * G, G);
  }
  UNPROTECT(1);
  return out;
}
