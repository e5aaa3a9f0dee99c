# dd_sim_spillover(): the spatial member of the dd_sim family (R/simulate.R),
# documented there.

#' @rdname dd_sim
#' @export
dd_sim_spillover <- function(n_units = 400, n_periods = 8, cohorts = NULL, never_share = 0.9, effect = 1,
                             spillover = 0.5, reach = 50, region_km = 1000, rho = 0, sd = 1, sd_unit = 1, trend = 0) {
  for (a in list(list(spillover, "spillover")))
    if (!is.numeric(a[[1]]) || length(a[[1]]) != 1L || !is.finite(a[[1]]))
      dd_stop("`%s` must be one finite number; got %s.", a[[2]], dd_show(a[[1]]))
  reach <- dd_check_positive(reach, "reach")
  region_km <- dd_check_positive(region_km, "region_km")
  d <- dd_sim_staggered(n_units, n_periods, cohorts, never_share, effect, 0, rho, sd, sd_unit, trend)
  n <- length(unique(d$id))
  # treatment at random over the units
  perm <- sample.int(n)
  d$first_treat <- d$first_treat[d$time == 1][perm][d$id]
  eff <- d$D * effect
  d$D <- as.numeric(d$first_treat > 0 & d$time >= d$first_treat)
  lat0 <- 37; km_lat <- 6376 * pi / 180
  lat <- lat0 + (stats::runif(n) - 0.5) * region_km / km_lat
  lon <- -98 + (stats::runif(n) - 0.5) * region_km / (km_lat * cos(lat0 * pi / 180))
  d$lat <- lat[d$id]; d$lon <- lon[d$id]
  # distance to the nearest unit treated by each period (haversine, 6376 km)
  g <- d$first_treat[d$time == 1]
  rad <- pi / 180
  near <- function(i, set) {
    set <- setdiff(set, i)
    if (!length(set)) return(Inf)
    h <- sin((lat[set] - lat[i]) * rad / 2)^2 + cos(lat[i] * rad) * cos(lat[set] * rad) * sin((lon[set] - lon[i]) * rad / 2)^2
    min(12752 * asin(pmin(1, sqrt(h))))
  }
  starts <- sort(unique(g[g > 0]))
  Dn <- matrix(Inf, n, length(starts))
  for (j in seq_along(starts)) Dn[, j] <- vapply(seq_len(n), near, 0, set = which(g > 0 & g <= starts[j]))
  j <- findInterval(d$time, starts)
  dist <- ifelse(j > 0, Dn[cbind(d$id, pmax(j, 1))], Inf)
  sp <- ifelse(d$D == 0 & dist < reach, spillover * (1 - dist / reach), 0)
  d$y <- d$y - eff + d$D * effect + sp
  d[, c("id", "time", "first_treat", "D", "lat", "lon", "y")]
}
