# diffdiff developer targets. `make demo` and `make test` work on a fresh
# Debian machine with R: both install what is missing first (`make demo`
# only the package's own dependencies, `make test` also the peers it is
# checked against).
PKG      := diffdiff
VERSION  := $(shell sed -n 's/^Version: *//p' DESCRIPTION)
TARBALL  := $(PKG)_$(VERSION).tar.gz
CHECKDIR := check
RSCRIPT  := Rscript --vanilla

# qte (did_cic's parity peer) lives in its own library: it needs a newer
# Matrix than R 4.2.2's (tools/install-qte.sh; installed by `make deps`)
QTE_LIB  ?= $(HOME)/.cache/diffdiff/qtelib
export DIFFDIFF_QTE_LIB := $(QTE_LIB)

# R CMD check must not reach the network (CRAN incoming, URL checks).
CHECK_ENV := _R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_CRAN_INCOMING_=false \
  _R_CHECK_URLS_=false _R_CHECK_FORCE_SUGGESTS_=true _R_CHECK_SYSTEM_CLOCK_=false \
  DIFFDIFF_REQUIRE_PARITY=true DIFFDIFF_SRC_DIR=$(CURDIR) DIFFDIFF_QTE_LIB=$(QTE_LIB)

.PHONY: deps install demo test test-duckdb build check sanitize valgrind fuzz interrupt bench coverage docs clean

deps:
	@bash tools/install-deps.sh

# the package with its vignettes, from a built tarball; needs only the
# Imports (and knitr/rmarkdown for the vignettes), not the test-only peers
install:
	@bash tools/install-deps.sh --minimal
	rm -f $(TARBALL)
	R CMD build --no-manual .
	R CMD INSTALL --no-multiarch $(TARBALL)

demo: install
	@$(RSCRIPT) tools/demo.R

docs:
	$(RSCRIPT) -e 'roxygen2::roxygenise(load_code = "installed")'

build: deps
	rm -f $(TARBALL)
	R CMD build .

test: build
	@bash tools/check.sh $(TARBALL) $(CHECKDIR) $(CHECK_ENV)

# the DuckDB tests of the database back end (CI skips them: duckdb compiles
# from source for over an hour); installs duckdb once
test-duckdb:
	@bash tools/test-duckdb.sh

sanitize: deps
	@bash tools/sanitize.sh

# the test suite and the did_sdid workspace boundary cases under valgrind
valgrind: deps
	@bash tools/valgrind.sh

# every registered .Call routine with hostile arguments, in child processes
# (0 crashes and 0 hangs expected; child crash traces go to check/fuzz.err)
fuzz: install
	@mkdir -p $(CHECKDIR)
	@bash -c 'ulimit -v 16000000; $(RSCRIPT) tools/fuzz.R "" 1 20 2> $(CHECKDIR)/fuzz.err'

# Ctrl-C stops each long kernel within 1 s and the session works afterwards
interrupt: install
	@bash tools/interrupt-check.sh

bench: install
	$(RSCRIPT) bench/twfe.R
	$(RSCRIPT) bench/cs.R
	$(RSCRIPT) bench/cs_band.R
	$(RSCRIPT) bench/sdid.R
	$(RSCRIPT) bench/survey.R
	bash tools/install-did2s.sh /tmp/did2slib
	DID2S_LIB=/tmp/did2slib $(RSCRIPT) bench/staggered.R
	bash tools/install-honestdid.sh /tmp/honestlib || true
	HONESTDID_LIB=/tmp/honestlib $(RSCRIPT) bench/honest.R
	$(RSCRIPT) bench/twfe_weights.R
	$(RSCRIPT) bench/dose.R
	$(RSCRIPT) bench/ddd.R
	$(RSCRIPT) bench/edid_mc.R
	$(RSCRIPT) bench/had_stute.R
	$(RSCRIPT) bench/efficient.R
	$(RSCRIPT) bench/synth.R
	$(RSCRIPT) bench/lpdid.R
	$(RSCRIPT) bench/lwdid.R
	bash tools/install-qte.sh $(QTE_LIB)
	QTE_LIB=$(QTE_LIB) $(RSCRIPT) bench/cic.R
	@if [ -n "$(DCDH_LIB)" ]; then DCDH_LIB=$(DCDH_LIB) $(RSCRIPT) bench/dcdh.R; fi
	$(RSCRIPT) bench/scenarios/warm.R
	$(RSCRIPT) bench/summary.R

# Monte Carlo coverage study (bench/coverage/): every script, then the
# table bench/results/coverage.md and inst/extdata/coverage.csv. Tests the
# diffdiff found on the library path; with COVERAGE_LIB=/path it is first
# installed there. COVERAGE_NSIM (default 2000) sets the draws per interval.
COVERAGE_SCRIPTS := twoby2 twfe event cs cs_band sa bjs gardner stacked sdid survey
coverage:
	@if [ -n "$(COVERAGE_LIB)" ]; then mkdir -p "$(COVERAGE_LIB)" && R CMD INSTALL --no-multiarch -l "$(COVERAGE_LIB)" . ; fi
	@start=$$(date +%s); \
	for s in $(COVERAGE_SCRIPTS); do \
	  R_LIBS="$(COVERAGE_LIB)$${R_LIBS:+:$$R_LIBS}" $(RSCRIPT) bench/coverage/$$s.R || exit 1; \
	done; \
	$(RSCRIPT) bench/coverage/report.R $$(( $$(date +%s) - start ))

clean:
	rm -rf $(CHECKDIR) $(PKG).Rcheck $(PKG)_*.tar.gz src/*.o src/*.so demo-output
