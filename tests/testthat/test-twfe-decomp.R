# twfe_decomp(): Callaway's ATT(g,t)-weight decomposition of the TWFE
# coefficient (peer: twfeweights, GitHub bcallaway11/twfeweights, not on
# CRAN, so compared through stored reference numbers; did's aggte() live).
#
# Reference numbers (tw_*, iw_*) were produced by twfeweights 0.9.0 (HEAD
# 8727179d1706ef95c6729a2d2b6159cf5c646801, installed from the GitHub
# snapshot into a private library), did 2.5.1, fixest 0.14.2, BMisc 1.4.10,
# on inst/extdata/castle.csv (50 states, 2000-2010, equally spaced years):
#   att <- did::att_gt("l_homicide", "year", "sid", "effyear", data = d,
#            control_group = "nevertreated", base_period = "universal",
#            bstrap = FALSE, cband = FALSE)
#   twfe_weights(att)$weights_df          -> tw_weight (weight), tw_att (attgt)
#   sum(attO_weights(att)$weights_df: weight * attgt)        = 0.108447484927098
#   sum(att_simple_weights(att)$weights_df: weight * attgt)  = 0.110383035457554
#   d$G <- d$effyear; d sorted by sid, year
#   implicit_twfe_weights(yname = "l_homicide", tname = "year", idname = "sid",
#            gname = "G", xformula = ~ l_income + unemployrt, data = d,
#            base_period = "gmin1" | "first_period")
#     per cell (twfe_gt[[k]]): alpha_weight -> iw_lambda (the same for both
#     base periods), weighted_outcome_diff -> iw_delta_gmin1 / iw_delta_first,
#     remainder (gmin1) -> iw_rem_gmin1, ess -> iw_ess;
#     gmin1: est 0.0892590768340525, decomposition_est 0.0893220397855142,
#     decomposition_remainder -6.29629514616256e-05, pt_violations_bias -0.0207763109576408;
#     first_period: est 0.0892590768340534, pt_violations_bias -0.0482937847690508.
#   caret (needed by BMisc::drop_collinear) was not installed: drop_collinear
#   was replaced by the identity (assignInNamespace), which is what caret's
#   findLinearCombos does for these two non-collinear covariates.
# Every vector is in cohort order (2005, ..., 2009), then year (2000, ..., 2010),
# printed with sprintf("%.17g").
tw_weight <- c(
  -0.010737481667714226, -0.010737481667714226, -0.010737481667714226, -0.010737481667714226,
  -0.010737481667714226, 0.017494238424470985, 0.010004190236748377, 0.0076995600251414222,
  0.0065472449193379433, 0.005971087366436206, 0.005971087366436206, -0.10554158809972762,
  -0.10554158809972762, -0.10554158809972762, -0.10554158809972762, -0.10554158809972762, -0.11303163628745025,
  0.16410014665828618, 0.13413995390739578, 0.11915985753195055, 0.11166980934422795, 0.11166980934422795,
  -0.021998742928975488, -0.021998742928975488, -0.021998742928975488, -0.021998742928975488,
  -0.021998742928975488, -0.024303373140582448, -0.054263565891472867, 0.051749423842447101,
  0.047140163419233182, 0.044835533207626233, 0.044835533207626233, -0.0057615755290173886,
  -0.0057615755290173886, -0.0057615755290173886, -0.0057615755290173886, -0.0057615755290173886,
  -0.0069138906348208667, -0.02189398701026608, -0.026503247433479992, 0.028807877645086948,
  0.027655562539283474, 0.027655562539283474, -0.00026188979677351778, -0.00026188979677351778,
  -0.00026188979677351778, -0.00026188979677351778, -0.00026188979677351778, -0.00083804734967525649,
  -0.008328095537397863, -0.010632725749004817, -0.011785040854808295, 0.016446679237376909,
  0.016446679237376909)
tw_att <- c(
  0.055558902950128511, -0.0037770990667597435, 0.013319065344745038, -0.00058479401571757343, 0,
  -0.12027709854060127, 0.098994896618712414, 0.17688346320185114, 0.14960857455073007, 0.14126675755813811,
  0.11194184724370096, 0.056271326122927269, 0.058705160330081448, 0.018960904972304661, 0.060680801617054879,
  0.055636759936334546, 0, 0.10799416730955844, 0.16028466638898728, 0.0637565164651408, 0.12884783274456788,
  0.088841944315347088, -0.10881245794609715, 0.067609121926640495, -0.067507977918560363,
  0.036218506605201692, 0.011082793714413753, 0.16179486733443776, 0, 0.14540661084626022,
  -0.062389535026563095, 0.27103508735910414, 0.15955673007230156, -0.24753608426143511, -0.27791740154398142,
  -0.032077445552266021, 0.078874869079426244, 0.021166022481583807, 0.16257268601450248, 0.10350827541973126,
  0, 0.036809104783779044, 0.25882052398961197, 0.070732264618929896, -0.40396741957500265, 0.1236383570679299,
  -0.64083227720754021, -0.031012808454447694, -0.042299590747930223, -0.59131099180928759,
  0.021440231369742161, -0.36065282235885704, 0, 0.10263094511524785, -0.10824703097600516)
iw_lambda <- c(
  -0.010337021861722782, -0.012134301056790569, -0.011139502073204821, -0.011257312472339668,
  -0.010985795273017776, 0.018092432491972111, 0.010858126437360295, 0.0077225013841013442,
  0.006208152982492064, 0.0067830224865582326, 0.0061896969545916702, -0.10292654466809838,
  -0.098560084990497634, -0.10224946825164091, -0.10406492861998251, -0.10740969090700202,
  -0.11800297192684471, 0.1619099973037906, 0.13580413011793432, 0.12099506818037947, 0.10863648067626845,
  0.10586801308569412, -0.021399526543294134, -0.022372963117445126, -0.021182930353756627,
  -0.020362175421273776, -0.022697114869986268, -0.025503060851103754, -0.05798792764517452,
  0.051260559825630318, 0.046628995113510541, 0.048072385358475508, 0.045543758504418053,
  -0.0062195639244039735, -0.0075762464631813613, -0.0073987394778146425, -0.0053770930691329688,
  -0.0064143386544710055, -0.0066213259389182547, -0.021634353747348182, -0.024635121676295866,
  0.027612199618940805, 0.028458557410040122, 0.029806025922585189, -0.0005774147085580324,
  -0.0015952638126440551, 6.5589436361517664e-05, -0.0010762135802307232, -0.0017583581063156601,
  -0.00097147325289091756, -0.007361859130740272, -0.0093095634393428068, -0.010965339550892839,
  0.016460171269104922, 0.017089724876148706)
iw_delta_gmin1 <- c(
  0.042402289267653083, -0.019953546975660763, 0.019361390768829638, -0.0051714143363798615, 0,
  -0.10590989340334583, 0.097737192976054765, 0.1663624046945531, 0.13970591320034467, 0.14494927823106191,
  0.1093944916991805, 0.030284288856994912, 0.058505774184258758, 0.029981038946008523, 0.062266188041481214,
  0.050186682260856486, 0, 0.1160336524804679, 0.15069613230888157, 0.064392602470735291, 0.14100148588902309,
  0.090249846099216074, -0.16160095092404086, 0.052479623597628727, -0.094256223199195854,
  0.041180345097349427, 0.0067246159887739661, 0.17226144027010334, 0, 0.15559315818143191,
  -0.092244448006237267, 0.28047156938988271, 0.16957462473280471, -0.28855891281456153, -0.33763987401519191,
  -0.054536653916857775, 0.090346960629087744, 0.026216542815695444, 0.17007042006703491, 0.11287679309178732,
  0, 0.030546067348499677, 0.27151924828416518, 0.068046627391284448, -0.4106367960324861, 0.11717986654533688,
  -0.63329375952737132, -0.044223602431045214, -0.051442720173632661, -0.56653023467786978,
  0.017506837777399201, -0.36498460123516796, 0, 0.10442158247807437, -0.11544559380771324)
iw_rem_gmin1 <- c(
  -1.2748301771467188, -1.2784842199737563, -1.2683314989638241, -1.2461087697085562, -1.2494816388712378,
  -1.2473690710328844, -1.2772099099191059, -1.2526327102451935, -1.2631886263764633, -1.2623580516919932,
  -1.2565509293629122, -1.3087556423583468, -1.3221608346954417, -1.3021205659718844, -1.2810507679452923,
  -1.2708833182424535, -1.2615326341750002, -1.3133821326675803, -1.2805550979197629, -1.2915614019502977,
  -1.2902698749624659, -1.2909560620414626, -1.2915401764031484, -1.3084174109778341, -1.2904041826466064,
  -1.2603683117776776, -1.2560121982108572, -1.2617018746908479, -1.2936002336895711, -1.2762949247134503,
  -1.2818522715913385, -1.2749545371045381, -1.2725386916787551, -1.2839418189286147, -1.2914287655765264,
  -1.2745736469048699, -1.2557465428531509, -1.2554780437221191, -1.251434833320247, -1.2979866436014427,
  -1.2672048539286302, -1.2709797262028601, -1.2659941419712972, -1.2587694901411191, -1.2755561861268303,
  -1.282440949115184, -1.2640664629750282, -1.2317233678077408, -1.234577281200655, -1.2520213947821663,
  -1.2687729917245405, -1.2530607616313005, -1.2673300594819685, -1.2547049401370156, -1.2461384938308444)
iw_ess <- c(
  27.55343638482508, 27.963318665331137, 28.226211429208053, 28.450950144442643, 28.479553516770125,
  28.019595556172003, 27.239926395585769, 28.288400121043672, 28.553978328531141, 28.611139340719998,
  28.518842633051268, 27.55343638482508, 27.963318665331137, 28.226211429208053, 28.450950144442643,
  28.479553516770125, 28.019595556172003, 27.239926395585769, 28.288400121043672, 28.553978328531141,
  28.611139340719998, 28.518842633051268, 27.55343638482508, 27.963318665331137, 28.226211429208053,
  28.450950144442643, 28.479553516770125, 28.019595556172003, 27.239926395585769, 28.288400121043672,
  28.553978328531141, 28.611139340719998, 28.518842633051268, 27.55343638482508, 27.963318665331137,
  28.226211429208053, 28.450950144442643, 28.479553516770125, 28.019595556172003, 27.239926395585769,
  28.288400121043672, 28.553978328531141, 28.611139340719998, 28.518842633051268, 27.55343638482508,
  27.963318665331137, 28.226211429208053, 28.450950144442643, 28.479553516770125, 28.019595556172003,
  27.239926395585769, 28.288400121043672, 28.553978328531141, 28.611139340719998, 28.518842633051268)
iw_delta_first <- c(
  0, -0.060746556892234828, -0.032996395900581364, -0.057777290022306027, -0.05616417013726778,
  -0.16881079257362991, 0.052111038700152788, 0.10633480875542861, 0.085578829590940514, 0.093008044240613319,
  0.066591387413896669, 0, -0.0010612717072850165, -0.013033885408906487, 0.015085360861758903,
  -0.0036885372943874645, -0.054116669597310138, 0.063759656079022758, 0.08919849969969007,
  0.033763594518867797, 0.092836276361889319, 0.041055853705218276, 0, 0.21625840625648268,
  0.073475027298295137, 0.15514619610098102, 0.14719599837693154, 0.26785302926760229, 0.12818199776786487,
  0.26615099530173519, 0.044335714281212357, 0.41260928696934995, 0.32277685067480805, 0,
  -0.063629988628683326, 0.22357560288546161, 0.34947129461260884, 0.27744553093144136, 0.40091647998596297,
  0.34930366975581251, 0.22749521976133802, 0.27631193771214291, 0.52832198846227574, 0.33864993869866067, 0,
  0.52619522176758593, -0.22762141592773547, 0.37132101806409501, 0.36106256163993317, -0.18031836331718504,
  0.43408269597631366, 0.028324845719851548, 0.39549657756534162, 0.51389855432285425, 0.30592883171932173)

castle <- function() read.csv(system.file("extdata", "castle.csv", package = "diffdiff"))
twfe_lm <- function(d, y, id, t, dcol, x = NULL, w = NULL) {
  f <- stats::reformulate(c(dcol, x, sprintf("factor(%s)", c(id, t))), y)
  ww <- if (is.null(w)) NULL else d[[w]]
  unname(coef(lm(f, d, weights = ww))[dcol])
}
# a small staggered panel with effects that vary by cohort and over time
sim_panel <- function(n = 90, T = 7, seed = 11) {
  set.seed(seed)
  s <- dd_sim_staggered(n_units = n, n_periods = T, cohorts = c(3, 5, 6), effect = 1, dynamic = 0.4)
  s$y <- s$y + ifelse(s$D == 1, 0.7 * (s$first_treat == 3), 0)
  s$x <- rnorm(nrow(s)) + 0.2 * s$time * (s$first_treat == 3)
  s$w <- (1 + s$id %% 3)
  s
}

test_that("castle: weights and ATT(g,t) equal twfeweights'; the sum is the TWFE coefficient (lm, did_twfe)", {
  d <- castle(); d0 <- d
  f <- suppressWarnings(twfe_decomp(d, "l_homicide", "sid", "year", "effyear"))
  expect_identical(d, d0)
  expect_s3_class(f, "twfe_decomp")
  expect_identical(f$cells$group, rep(2005:2009, each = 11) + 0)
  expect_identical(f$cells$time, rep(2000:2010, 5) + 0)
  expect_lt(max(abs(f$cells$weight - tw_weight)), 1e-8)            # twfeweights 0.9.0, 1e-8
  expect_lt(max(abs(f$cells$att - tw_att)), 1e-8)
  tw <- twfe_lm(d, "l_homicide", "sid", "year", "post")
  expect_equal(f$beta, tw, tolerance = 1e-10)
  expect_equal(sum(f$cells$weight * f$cells$att), tw, tolerance = 1e-10)
  expect_equal(f$post + f$pre, tw, tolerance = 1e-10)
  expect_identical(f$remainder, 0)
  expect_equal(f$beta, unname(coef(did_twfe(d, "l_homicide", "sid", "year", "post"))[1]), tolerance = 1e-10)
  expect_equal(f$att_O, 0.108447484927098, tolerance = 1e-8)       # twfeweights attO_weights
  expect_equal(f$att_simple, 0.110383035457554, tolerance = 1e-8)  # twfeweights att_simple_weights
  # the spec's identities
  expect_equal(sum(f$cells$weight[f$cells$post]), 1, tolerance = 1e-12)
  expect_equal(as.vector(tapply(f$cells$weight, f$cells$group, sum)), rep(0, 5), tolerance = 1e-12)
  expect_equal(f$pre, sum(f$cells$contribution[f$cells$time < f$cells$group]), tolerance = 1e-14)
  expect_equal(sum(f$cells$weight_O * f$cells$att), f$att_O, tolerance = 1e-12)
  expect_equal(sum(f$cells$weight_simple * f$cells$att), f$att_simple, tolerance = 1e-12)
  expect_equal(f$cells$ess, rep(29, 55), tolerance = 1e-12)        # 29 never-treated states, no covariates
  # bacon_decomp's TWFE coefficient is the same number
  expect_equal(bacon_decomp(d, "l_homicide", "sid", "year", gname = "effyear")$beta_twfe, f$beta, tolerance = 1e-10)
})

test_that("ATT^O and the simple average are did_cs's aggregations (universal base, never treated) and did's aggte", {
  d <- castle()
  f <- suppressWarnings(twfe_decomp(d, "l_homicide", "sid", "year", "effyear"))
  cs <- suppressWarnings(did_cs(d, "l_homicide", "sid", "year", "effyear", control_group = "nevertreated",
                                base_period = "universal", nboot = 0, cband = FALSE))
  expect_equal(f$att_O, coef(aggregate(cs, "group"))[["ATT"]], tolerance = 1e-12)
  expect_equal(f$att_simple, coef(aggregate(cs, "simple"))[["ATT"]], tolerance = 1e-12)
  ct <- cs$coeftable
  expect_equal(f$cells$att, ct$estimate[match(paste(f$cells$group, f$cells$time), paste(ct$group, ct$time))],
               tolerance = 1e-12)
  need_peer("did")
  att <- suppressWarnings(did::att_gt("l_homicide", "year", "sid", "effyear", data = d, control_group = "nevertreated",
                                      base_period = "universal", bstrap = FALSE, cband = FALSE))
  expect_equal(f$att_O, did::aggte(att, type = "group")$overall.att, tolerance = 1e-8)      # did live, 1e-8
  expect_equal(f$att_simple, did::aggte(att, type = "simple")$overall.att, tolerance = 1e-8)
})

test_that("castle with covariates: implicit weights, cell contrasts, remainder and ESS equal twfeweights'", {
  d <- castle()
  tw <- twfe_lm(d, "l_homicide", "sid", "year", "post", c("l_income", "unemployrt"))
  u <- twfe_decomp(d, "l_homicide", "sid", "year", "effyear", xformla = ~ l_income + unemployrt)
  expect_equal(u$beta, tw, tolerance = 1e-10)
  expect_lt(max(abs(u$cells$weight - iw_lambda)), 1e-8)           # twfeweights 0.9.0, 1e-8
  expect_lt(max(abs(u$cells$att - iw_delta_gmin1)), 1e-8)
  expect_lt(max(abs(u$cells$remainder - iw_rem_gmin1)), 1e-8)
  expect_lt(max(abs(u$cells$ess - iw_ess)), 1e-8)
  expect_equal(u$post + u$pre, 0.0893220397855142, tolerance = 1e-8)
  expect_equal(u$remainder, -6.29629514616256e-05, tolerance = 1e-8)
  expect_equal(u$pre, -0.0207763109576408, tolerance = 1e-8)
  expect_equal(u$post + u$pre + u$remainder, tw, tolerance = 1e-10)
  expect_true(is.na(u$att_O) && is.null(u$cs))
  fp <- twfe_decomp(d, "l_homicide", "sid", "year", "effyear", xformla = ~ l_income + unemployrt,
                    base_period = "first_period")
  expect_identical(fp$base_period, "first_period")
  expect_lt(max(abs(fp$cells$att - iw_delta_first)), 1e-8)
  expect_equal(fp$pre, -0.0482937847690508, tolerance = 1e-8)
  expect_lt(abs(fp$remainder), 1e-12)
  expect_equal(fp$post + fp$pre, tw, tolerance = 1e-10)
  expect_equal(fp$cells$weight, u$cells$weight, tolerance = 1e-14)
  expect_equal(sum(u$cells$weight[u$cells$post]), 1, tolerance = 1e-12)
  expect_equal(as.vector(tapply(u$cells$weight, u$cells$group, sum)), rep(0, 5), tolerance = 1e-12)
  # twfeweights' spelling of the universal base period
  g1 <- twfe_decomp(d, "l_homicide", "sid", "year", "effyear", xformla = ~ l_income + unemployrt, base_period = "gmin1")
  expect_identical(g1$base_period, "universal")
  expect_equal(g1$cells, u$cells)
})

test_that("simulated staggered panel: the identity against lm and did_twfe, with and without weights and covariates", {
  s <- sim_panel()
  for (x in list(NULL, "x")) for (w in list(NULL, "w")) {
    f <- twfe_decomp(s, "y", "id", "time", "first_treat", xformla = if (!is.null(x)) ~ x, weightsname = w)
    tw <- twfe_lm(s, "y", "id", "time", "D", x, w)
    lab <- paste("x:", !is.null(x), "w:", !is.null(w))
    expect_equal(f$beta, tw, tolerance = 1e-10, label = lab)
    expect_equal(f$post + f$pre + f$remainder, tw, tolerance = 1e-10, label = lab)
    expect_equal(sum(f$cells$weight[f$cells$post]), 1, tolerance = 1e-12, label = lab)
    expect_equal(as.vector(tapply(f$cells$weight, f$cells$group, sum)), rep(0, 3), tolerance = 1e-12, label = lab)
    dt <- did_twfe(s, "y", "id", "time", "D", xformla = if (!is.null(x)) ~ x, weightsname = w)
    expect_equal(f$beta, unname(coef(dt)[1]), tolerance = 1e-10, label = lab)
  }
  # without covariates, the covariate route's contrasts (omega = 1) are did_cs's ATT(g,t), weighted or not
  for (w in list(NULL, "w")) {
    f <- twfe_decomp(s, "y", "id", "time", "first_treat", weightsname = w)
    p <- diffdiff:::dd_panel(s, "y", "id", "time", c(gname = "first_treat"), NULL, w, sorted = TRUE)
    wr <- if (is.null(w)) rep(1, length(p$y)) else p$w
    D <- as.double(p$g != 0 & p$tt >= p$g)
    r <- diffdiff:::dd_tw_resid(D, NULL, list(p$idc, p$tc), wr, diffdiff:::dd_fe_opts())
    gu <- p$g[diffdiff:::dd_first_rows(p$idc)]
    cc <- diffdiff:::dd_twd_cells(p$y, r, wr, p$idc, p$tc + 1L, gu, sort(unique(p$tt)), "universal")
    expect_equal(cc$att, f$cells$att, tolerance = 1e-10)
    expect_equal(cc$weight, f$cells$weight, tolerance = 1e-14)
    # omega = 1: each cohort's remainder is minus the never treated's mean at its base period, the same in
    # every period, so the weighted remainder is 0
    expect_lt(max(abs(cc$remainder - ave(cc$remainder, cc$group))), 1e-12)
    expect_lt(abs(sum(cc$weight * cc$remainder)), 1e-12)
  }
  # the rows' order does not matter; dname gives the same as gname
  f <- twfe_decomp(s, "y", "id", "time", "first_treat", xformla = ~ x)
  set.seed(2)
  expect_equal(twfe_decomp(s[sample(nrow(s)), ], "y", "id", "time", "first_treat", xformla = ~ x)$cells, f$cells,
               tolerance = 1e-12)
  g <- twfe_decomp(s, "y", "id", "time", dname = "D", xformla = ~ x)
  expect_equal(g$cells, f$cells, tolerance = 1e-12)
  # the post weights are twfe_weights()' (de Chaisemartin-D'Haultfoeuille) cell weights, summed by cohort and period
  tw <- twfe_weights(s, "y", "id", "time", "D", xformla = ~ x)$weights
  tw$g <- s$first_treat[match(tw$id, s$id)]
  tw <- aggregate(weight ~ g + time, tw[tw$weight != 0, ], sum)
  m <- merge(f$cells[f$cells$post, ], tw, by.x = c("group", "time"), by.y = c("g", "time"))
  expect_equal(nrow(m), sum(f$cells$post))
  expect_equal(m$weight.x, m$weight.y, tolerance = 1e-10)
})

test_that("the weights by hand on a tiny panel (the spec's formula A) and the cell effects by hand", {
  set.seed(20240601); n <- 20; TT <- 4
  G <- rep(c(2, 3, 4, 0), each = 5)
  d <- expand.grid(t = 1:TT, id = 1:n)[, c("id", "t")]; d$G <- G[d$id]
  d$D <- as.integer(d$G != 0 & d$t >= d$G)
  d$y <- round(rnorm(n)[d$id] + 0.2 * d$t + ifelse(d$D == 1, 1 + 0.5 * (d$t - d$G), 0) + rnorm(nrow(d), sd = 0.3), 3)
  f <- twfe_decomp(d, "y", "id", "t", "G")
  p <- c(`2` = 5, `3` = 5, `4` = 5) / 20
  Dt <- vapply(1:TT, function(t) mean(G != 0 & G <= t), 0)
  hand <- expand.grid(t = 1:TT, g = c(2, 3, 4))
  hand$h <- (hand$t >= hand$g) - (TT - hand$g + 1) / TT - Dt[hand$t] + mean(Dt)
  hand$w <- p[as.character(hand$g)] * hand$h
  hand$w <- hand$w / sum(hand$w[hand$t >= hand$g])
  ym <- function(g, t) mean(d$y[d$G == g & d$t == t])
  hand$att <- mapply(function(g, t) (ym(g, t) - ym(g, g - 1)) - (ym(0, t) - ym(0, g - 1)), hand$g, hand$t)
  expect_equal(f$cells$weight, unname(hand$w), tolerance = 1e-12)
  expect_equal(f$cells$att, hand$att, tolerance = 1e-12)
  expect_equal(sum(hand$w * hand$att), twfe_lm(d, "y", "id", "t", "D"), tolerance = 1e-10)
  expect_equal(f$beta, twfe_lm(d, "y", "id", "t", "D"), tolerance = 1e-10)
  # the spec's table (twfeweights on these data): the weights of cohort 2 are -0.3, 0.3, 0.1, -0.1
  expect_equal(f$cells$weight[1:4], c(-0.3, 0.3, 0.1, -0.1), tolerance = 1e-12)
  # first-period base: ATT(g,t) - ATT(g,1); the total is unchanged, the split is not
  fp <- twfe_decomp(d, "y", "id", "t", "G", base_period = "first_period")
  expect_equal(fp$cells$att, hand$att - ave(ifelse(hand$t == 1, hand$att, 0), hand$g, FUN = sum), tolerance = 1e-12)
  expect_equal(fp$post + fp$pre, f$beta, tolerance = 1e-10)
  expect_false(isTRUE(all.equal(fp$pre, f$pre)))
})

test_that("unequal period spacing gives the numbers of the relabelled periods 1..T (twfeweights' bug not reproduced)", {
  s <- sim_panel(n = 60, T = 6, seed = 5)
  g <- s; g$time <- 1998 + 2 * g$time; g$first_treat <- ifelse(g$first_treat == 0, 0, 1998 + 2 * g$first_treat)
  for (x in list(NULL, ~ x)) {
    a <- twfe_decomp(s, "y", "id", "time", "first_treat", xformla = x)
    b <- twfe_decomp(g, "y", "id", "time", "first_treat", xformla = x)
    expect_equal(b$beta, a$beta, tolerance = 1e-12)
    expect_equal(b$cells$weight, a$cells$weight, tolerance = 1e-12)
    expect_equal(b$cells$att, a$cells$att, tolerance = 1e-12)
    expect_equal(b$cells$event, a$cells$event)
    expect_equal(b$cells$time, 1998 + 2 * a$cells$time)
    expect_equal(c(b$post, b$pre, b$att_O), c(a$post, a$pre, a$att_O), tolerance = 1e-12)
    expect_equal(b$beta, twfe_lm(g, "y", "id", "time", "D", if (!is.null(x)) "x"), tolerance = 1e-10)
  }
  # with raw period units in T - g + 1 (twfeweights' twfe_weights), the weights would not sum to the coefficient
  a <- twfe_decomp(g, "y", "id", "time", "first_treat")
  Tn <- max(g$time); raw <- (a$cells$time >= a$cells$group) - (Tn - a$cells$group + 1) / Tn
  expect_false(isTRUE(all.equal(raw, (a$cells$position >= match(a$cells$group, a$periods)) -
                                  (6 - match(a$cells$group, a$periods) + 1) / 6)))
})

test_that("methods: print, summary, tidy, glance, as.data.frame, plot, autoplot", {
  s <- sim_panel(n = 60, T = 6, seed = 3)
  f <- twfe_decomp(s, "y", "id", "time", "first_treat")
  expect_output(print(f), "TWFE coefficient")
  sm <- summary(f)
  expect_s3_class(sm, "summary.twfe_decomp")
  expect_equal(sm$split$contribution[3], f$beta, tolerance = 1e-14)
  expect_equal(sum(sm$cohorts$weight_post), 1, tolerance = 1e-12)
  expect_output(print(sm), "By cohort")
  td <- tidy(f)
  expect_identical(nrow(td), nrow(f$cells))
  expect_identical(td$term[1], sprintf("ATT(%s,%s)", f$cells$group[1], f$cells$time[1]))
  expect_equal(td$estimate, f$cells$att)
  gl <- glance(f)
  expect_equal(gl$beta_twfe, f$beta)
  expect_identical(nrow(gl), 1L)
  expect_identical(as.data.frame(f), f$cells)
  pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(f), f)
  expect_error(print(f, digits = 3), "digits")
  fx <- twfe_decomp(s, "y", "id", "time", "first_treat", xformla = ~ x)
  expect_output(print(fx), "remainder")
  expect_identical(plot(fx), fx)
  skip_if_not_installed("ggplot2")
  expect_s3_class(ggplot2::autoplot(f), "ggplot")
})

test_that("bad input: errors name the argument and the value", {
  s <- sim_panel(n = 40, seed = 1)
  expect_error(twfe_decomp(s, "y", "id", "time", "nope"), "nope")
  expect_error(twfe_decomp(s, "y", "id", "time"), "gname")
  expect_error(twfe_decomp(s, "y", "id", "time", "first_treat", dname = "D"), "both")
  expect_error(twfe_decomp(s[-3, ], "y", "id", "time", "first_treat"), "unbalanced")
  rv <- s; rv$D[rv$id == rv$id[rv$D == 1][1] & rv$time == 5] <- 0
  expect_error(twfe_decomp(rv, "y", "id", "time", dname = "D"), "switches off again")
  nn <- s[s$first_treat != 0, ]
  expect_error(twfe_decomp(nn, "y", "id", "time", "first_treat"), "no never-treated unit")
  at <- s; at$first_treat[at$id == 1] <- 1
  expect_error(twfe_decomp(at, "y", "id", "time", "first_treat"), "unit 1 is treated from the first period")
  expect_error(twfe_decomp(s, "y", "id", "time", "first_treat", base_period = "varying"), "\"varying\"")
  vw <- s; vw$w[vw$id == 2 & vw$time == 3] <- 9
  expect_error(twfe_decomp(vw, "y", "id", "time", "first_treat", weightsname = "w"), "constant within each unit; unit 2")
  nt <- s; nt$first_treat <- 0
  expect_error(twfe_decomp(nt, "y", "id", "time", "first_treat"), "no unit is treated")
  expect_error(twfe_decomp(s, "y", "id", "time", "first_treat", xformla = ~ zz), "zz")
  s$z <- s$id / 10                                   # time-invariant: absorbed by the unit effects
  expect_error(twfe_decomp(s, "y", "id", "time", "first_treat", xformla = ~ z), "`xformla` = ~z: .*Time-invariant")
})
