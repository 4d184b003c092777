# rbrepro: every entry point installs what it needs into .venv first (pinned by constraints.txt).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# Data source: the local mirror when it exists (this project's machines), else the LIBSVM site.
MIRROR ?= $(abspath ../shared/data/libsvm)
DATA_ENV := $(if $(wildcard $(MIRROR)/MANIFEST.tsv),RBREPRO_MIRROR=$(MIRROR),)
# The make targets keep their downloaded and parsed data inside this checkout (ignored by git), not in
# the user's cache folder; RBREPRO_DATA=PATH make ... puts it elsewhere.
export RBREPRO_DATA ?= $(CURDIR)/.data

.PHONY: docs bench-rcd-kernels bench-stopping bench-sigma-auto publish bench-distributed bench-roofline theory scaling paper-scale shape-binning report install demo test soak battery bench-authors bench-authors-solver bench-susy bench-layout bench-profile figures figures-fair plots compare figures-mini bench bench-train bench-parse bench-rcd bench-pcg bench-equal-r bench-tta bench-peers bench-growth clean-results help

help:
	@echo "make demo         sweep configs/quick.yaml on the embedded digits set (offline) and plot it"
	@echo "make test         install and run the whole test suite"
	@echo "make docs         build the documentation site into site/ (mkdocs build --strict; installs the docs extra)"
	@echo "make figures      fetch, sweep and plot Figures 3-6 into the published results/ and figures/"
	@echo "                  (make fig3 ... fig6 one at a time); uses the"
	@echo "                  local mirror when MIRROR=$(MIRROR) exists, else the LIBSVM site"
	@echo "make figures-fair the same for fig3 ... fig6 only (not the as-published runs)"
	@echo "make plots        redraw the published figures from the committed results/*/results.csv and"
	@echo "                  results/theory/diagnostics.csv (no sweeping, no diagnostics recomputed)"
	@echo "make compare      our Fig. 3 and Fig. 5 points beside the authors' published ones (both protocols)"
	@echo "make scaling      how time and memory grow with N and R, every method, SUSY-shaped data (long)"
	@echo "make paper-scale  Fig. 5's methods on the covtype shape, RB at R = 1024 on the SUSY shape (long)"
	@echo "make shape-binning how the synthetic shapes bin on the authors' grids, beside their real rows (minutes)"
	@echo "make theory       Theorem 1 measured on configs/theory.yaml's datasets (rbrepro diagnose; minutes)"
	@echo "make publish COMMIT=<sha>  every published run made from that one commit in a clean worktree beside"
	@echo "                  this checkout (resumable), its rows checked, copied into results/, figures and report redrawn"
	@echo "make report       regenerate REPRODUCTION.md and the generated blocks of README.md and docs/ from the"
	@echo "                  committed result CSVs and benchmark rows"
	@echo "make figures-mini the same with the small mini configs (a few minutes; part of CI)"
	@echo "make soak         long fault-injection and property-test runs (not in CI)"
	@echo "make battery      the hostile inputs and injected faults through the real CLI, with counts"
	@echo "make bench        the quick benchmarks: bench-train (ijcnn1 train times), bench-parse (parser vs"
	@echo "                  scikit-learn), bench-rcd (parallel RCD speedups, RB vs RF), bench-pcg (PCG vs"
	@echo "                  CG), bench-equal-r, bench-tta (time to accuracy), bench-growth"
	@echo "make bench-layout RB test lookup and id width; make bench-profile: where the published runs' time goes"
	@echo "make bench-susy   the paper's largest run, RB at R = 1024 on the SUSY shape (4 M rows)"
	@echo "make bench-distributed  RB at R = 1024 on 4 M SUSY-shaped rows across local:4 dask workers (12 GB each),"
	@echo "                  and the time per CG step for 1 ... 1000 machines on 10 Gb/s"
	@echo "make bench-stopping  CG's stopping rules (authors' 50 steps, held-out early stop, preconditioned) on every"
	@echo "                  mirror dataset, RB at R = 256 (bench/results/stopping.csv)"
	@echo "make bench-sigma-auto  --sigma auto against one fit at the sigma it chooses (bench/results/sigma-auto.csv)"
	@echo "make bench-peers  time to exact-kernel accuracy - 0.5/1/2 pt: rbrepro RB, sklearn Nystroem/RBFSampler,"
	@echo "                  sklearnex SVC/SVR, the authors' C++ (AUTHORS=PATH, SKLEARNEX_PYTHON=PATH)"
	@echo "make bench-authors the authors' C++ beside rbrepro on every mirror dataset (AUTHORS=PATH)"
	@echo "make bench-authors-solver  the authors' PCG driver (49 updates, warm-started classes) on their draws"
	@echo "make bench-roofline  each part of RB's CG step and featurize against the machine's floor for it, every"
	@echo "                  mirror dataset at R = 64, 256, 1024 (mnist 64, 256; bench/results/roofline.csv)"
	@echo "make bench-rcd-kernels  seconds per RCD epoch of each kernel (bench/results/rcd-kernels.csv)"

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

# The documentation's own packages (the docs extra), installed only where `make docs` needs them.
DOCS_STAMP := $(VENV)/.installed-docs-stamp
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,docs]'
	touch $(DOCS_STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/rbrepro sweep configs/quick.yaml
	$(BIN)/rbrepro plot fig3 runs/quick --out figures/quick-fig3
	@echo "results: runs/quick/results.csv   figure: figures/quick-fig3.png"

# Two pytest workers (pytest-xdist), one a core of CI's two: most tests wait on a child process or a
# server, so the suite takes well under its time on one. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# The documentation site (mkdocs.yml: docs/ and the docstrings) into site/, ignored by git. --strict
# makes every warning an error: broken internal links and anchors, pages missing from the nav.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Figures from nothing: fetch what the data source has, sweep, plot, then say what is missing.
# These targets publish: they write results/fig* and figures/fig* (a plain `rbrepro sweep` writes runs/).
# A sweep with failed cells exits 1; the leading '-' lets the figure be drawn from what finished.
# fig3-as-published and fig5-as-published are the authors' protocol (docs/design.md §2a); fig3, fig5 and fig6 the fair
# one (sigma chosen on validation); fig4 records protocol custom (sigma set by hand).
# Fig. 5 runs before Fig. 3: their common cells (the exact kernel and RB at R = 128) are then
# taken from results/fig5* (--reuse-from: the same key means the same computation) instead of
# run twice. Both are exclusive (timed on an idle machine, retimed where it was busy), and an exclusive
# sweep takes only rows run exclusively and timed quiet (or whose retimes are spent).
PUBLISHED_RUNS := fig5 fig3 fig5-as-published fig3-as-published fig4 fig6
FAIR_RUNS := fig5 fig3 fig4 fig6
REUSE_fig3 := results/fig5
REUSE_fig3-as-published := results/fig5-as-published
figure_of = $(firstword $(subst -, ,$(1)))

fig%: $(STAMP)
	-$(DATA_ENV) $(BIN)/rbrepro fetch --all -q
	-$(DATA_ENV) $(BIN)/rbrepro sweep configs/fig$*.yaml --out results/fig$* $(addprefix --reuse-from ,$(REUSE_fig$*))
	$(BIN)/rbrepro plot $(call figure_of,fig$*) results/fig$* --out figures/fig$*
	$(BIN)/python -m rbrepro.sweep.summary results/fig$*

figures: $(PUBLISHED_RUNS)

# The fair protocol's four figures alone.
figures-fair: $(FAIR_RUNS)

# Redraw the published figures from the committed result CSVs (seconds; no data needed).
plots: $(STAMP)
	for r in $(PUBLISHED_RUNS); do \
	  if [ -f results/$$r/results.csv ]; then $(BIN)/rbrepro plot $$(echo $$r | cut -d- -f1) results/$$r --out figures/$$r || exit 1; \
	  else echo "figures/$$r: not drawn, results/$$r has no results yet (make $$r runs it)"; fi; done
	if [ -f results/scaling/results.csv ]; then $(BIN)/rbrepro plot scaling results/scaling --out figures/scaling; \
	else echo "figures/scaling: not drawn, results/scaling has no results yet (make scaling runs it)"; fi
	if [ -f results/theory/diagnostics.csv ]; then $(BIN)/rbrepro plot theory results/theory --out figures/theory; \
	else echo "figures/theory: not drawn, results/theory has no diagnostics yet (make theory runs it)"; fi

# Theorem 1 measured: rbrepro diagnose on configs/theory.yaml's datasets (minutes a dataset);
# publishes results/theory/ and figures/theory.{png,pdf}; then `make report`.
theory: $(STAMP)
	$(DATA_ENV) $(BIN)/rbrepro diagnose configs/theory.yaml --out results/theory --figure figures/theory

# How cost grows: every method over R and over N, on SUSY-shaped rows (generated here on first use:
# no data to fetch); publishes results/scaling and figures/scaling.{png,pdf} with the fitted
# exponents; then `make report`. Both runs are made under the memory limit SCALE_MEMORY_GB, set
# above the default share of this project's machine so that SUSY RB at R = 1024 is not skipped
# (each row records the limit it ran under).
SCALE_MEMORY_GB ?= 20
scaling: $(STAMP)
	$(BIN)/rbrepro sweep configs/scaling.yaml --out results/scaling --memory-limit $(SCALE_MEMORY_GB)
	$(BIN)/rbrepro plot scaling results/scaling --out figures/scaling

# The paper's scale: Fig. 5's methods at R = 8 ... 1024 on the covtype shape and RB at
# R = 1024 on the SUSY shape (generated here on first use); publishes results/paper-scale, which
# `make report` sets beside the authors' times on the real sets.
paper-scale: $(STAMP)
	$(BIN)/rbrepro sweep configs/paper-scale.yaml --out results/paper-scale --memory-limit $(SCALE_MEMORY_GB)

# How the synthetic shapes bin: each registered shape's training rows on the authors' own
# grids, D beside theirs on the real set, per Fig. 3 sigma; publishes results/shape-binning/bins.csv,
# which `make report` tables beside the paper's-scale runs.
shape-binning: $(STAMP)
	$(BIN)/python -m bench.shape_binning --out results/shape-binning

# Every published run from one commit: a clean worktree of COMMIT beside this checkout runs
# each run's sweep with that commit's code (resuming from its cells; a run checked once is not rerun),
# every row must name COMMIT and a clean tree, then the results are copied into results/, the figures
# redrawn and the report regenerated. RUNS="fig5 fig3" limits it. Commit what it copies.
publish: $(STAMP)
	@test -n "$(COMMIT)" || { echo "make publish COMMIT=<sha>: name the commit to publish from"; exit 2; }
	$(DATA_ENV) $(BIN)/python -m rbrepro.published.publish $(COMMIT) --python $(abspath $(BIN)/python) $(if $(RUNS),--runs $(RUNS))

# REPRODUCTION.md and the generated blocks of README.md and docs/, computed from the committed
# results/*/results.csv and bench/results/*.csv (seconds; no data needed). CI runs
# `rbrepro report --check`, which fails on a stale number.
report: $(STAMP)
	$(BIN)/rbrepro report

# Our Fig. 3 and Fig. 5 points beside the authors' published ones, both protocols (no data needed).
compare: $(STAMP)
	for r in fig3 fig3-as-published fig5 fig5-as-published; do \
	  if [ -f results/$$r/results.csv ]; then $(BIN)/rbrepro compare results/$$r --summary || exit 1; \
	  else echo "results/$$r: no results yet (make $$r runs it)"; fi; done

# The mini configs (mirror datasets, small grids): all four figures in a few minutes; part of CI.
figures-mini: $(STAMP)
	for f in 3 4 5 6; do \
	  $(DATA_ENV) $(BIN)/rbrepro sweep configs/fig$$f-mini.yaml || exit 1; \
	  $(BIN)/rbrepro plot fig$$f runs/fig$$f-mini --out figures/fig$$f-mini || exit 1; \
	done
	$(BIN)/rbrepro summary runs/fig3-mini runs/fig4-mini runs/fig5-mini runs/fig6-mini

# Long variants of the fault and bad-input suites: 15 SIGKILLs of a sweep at random moments,
# property tests with thousands of examples (not part of CI).
soak: $(STAMP)
	RBREPRO_SOAK=15 $(BIN)/python -m pytest -q tests/test_sweep.py tests/test_fault_injection.py \
	  tests/test_fetch_faults.py tests/test_libsvm_parser.py -k "sigkill or property or fetch or rejects"

# The hostile-input battery: bad inputs and injected faults through the real CLI; prints one line per
# case and the counts of each class (exit 1 if any case is BAD; docs/reliability.md).
battery: $(STAMP)
	$(BIN)/python -m bench.hostile_battery --kills 6

# Benchmarks print each figure beside a baseline measured in the same run and write them, with
# provenance, to bench/results/<name>.csv (committed; read by `make report`) or append them to
# results/bench.csv (ignored).
bench: bench-train bench-parse bench-rcd bench-pcg bench-equal-r bench-tta bench-growth

bench-train: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.train_ijcnn1

bench-rcd: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.rcd_speedup

# Seconds per RCD epoch of each kernel: the one-thread baselines of Fig. 6's speedups.
bench-rcd-kernels: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.rcd_kernels

bench-stopping: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.stopping

bench-sigma-auto: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.sigma_auto

bench-pcg: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.pcg_vs_cg

bench-equal-r: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.equal_r

bench-tta: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.time_to_accuracy ijcnn1 cadata mnist

# Time to accuracy against the fastest CPU peers, one run: AUTHORS=PATH a checkout of
# teddylfwu/RandomBinning, SKLEARNEX_PYTHON=PATH a python with scikit-learn-intelex (kept out of .venv:
# its tbb would switch numba's threading layer); either missing is skipped with one line.
bench-peers: $(STAMP)
	$(DATA_ENV) RBREPRO_AUTHORS_CHECKOUT="$(AUTHORS)" RBREPRO_SKLEARNEX_PYTHON="$(SKLEARNEX_PYTHON)" \
		$(BIN)/python -m bench.peers --datasets ijcnn1 cadata letter --repeats 3 --out bench/results/peers.csv

bench-growth: $(STAMP)
	$(BIN)/python -m bench.growth
	$(BIN)/python -m bench.growth --targets

# RB against the authors' C++, built from a checkout you point to (AUTHORS=path/to/RandomBinning);
# needs g++, libopenblas-dev and gfortran. Skips with a message without AUTHORS.
bench-authors: $(STAMP)
	$(DATA_ENV) RBREPRO_AUTHORS_CHECKOUT="$(AUTHORS)" $(BIN)/python -m bench.authors

bench-susy: $(STAMP)
	$(BIN)/python -m bench.susy_scale

bench-distributed: $(STAMP)
	$(BIN)/python -m bench.distributed --rows 4000000 --R 1024 --workers 4 --worker-memory 12 --model-D 276141

bench-authors-solver: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.authors_solver letter
	$(DATA_ENV) $(BIN)/python -m bench.authors_solver cadata 0.39 1.12 1.58 4.46 31.62

# RB's CG against the machine's memory bandwidth (a STREAM-like triad) in one process.
bench-roofline: $(STAMP)
	rm -f bench/results/roofline.csv
	$(DATA_ENV) RBREPRO_BENCH_CSV=bench/results/roofline.csv $(BIN)/python -m bench.roofline ijcnn1 cadata letter cod_rna_split
	$(DATA_ENV) RBREPRO_BENCH_CSV=bench/results/roofline.csv $(BIN)/python -m bench.roofline mnist --R 64 256

bench-layout: $(STAMP)
	$(DATA_ENV) $(BIN)/python -m bench.rb_layout

bench-profile: $(STAMP)
	$(BIN)/python -m bench.cost_profile

bench-parse: $(STAMP)
	$(BIN)/python -m bench.parse_throughput 1000000

clean-results:
	rm -rf runs figures/quick-fig3.* figures/*-mini.* site
