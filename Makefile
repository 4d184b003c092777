# rbrepro: every entry point installs what it needs into .venv first (pinned by constraints.txt).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
MIRROR ?= $(abspath ../shared/data/libsvm)
# Mirror datasets of Fig. 3 (covtype, SUSY, acoustic and census are not in the local mirror).
FIG3_MIRROR_DATASETS := --dataset cadata --dataset ijcnn1 --dataset letter --dataset mnist

.PHONY: install demo test fig3 fig3-mirror bench bench-train bench-parse bench-rcd clean-results help

help:
	@echo "make demo         sweep configs/quick.yaml on the embedded digits set (offline) and plot it"
	@echo "make test         install and run the whole test suite"
	@echo "make fig3-mirror  Fig. 3 sweep on the datasets of the local mirror (MIRROR=$(MIRROR))"
	@echo "make fig3         Fig. 3 sweep on every dataset (needs internet or a full mirror)"
	@echo "make bench        all benchmarks: bench-train (ijcnn1 train times), bench-parse (parser vs"
	@echo "                  scikit-learn), bench-rcd (parallel RCD speedups, RB vs RF)"

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/rbrepro sweep configs/quick.yaml
	$(BIN)/rbrepro plot fig3 results/quick --out figures/quick-fig3
	@echo "results: results/quick/results.csv   figure: figures/quick-fig3.png"

test: $(STAMP)
	$(BIN)/python -m pytest -q

fig3-mirror: $(STAMP)
	RBREPRO_MIRROR=$(MIRROR) $(BIN)/rbrepro sweep configs/fig3.yaml $(FIG3_MIRROR_DATASETS)
	$(BIN)/rbrepro plot fig3 results/fig3 --out figures/fig3

fig3: $(STAMP)
	$(BIN)/rbrepro sweep configs/fig3.yaml
	$(BIN)/rbrepro plot fig3 results/fig3 --out figures/fig3

bench: bench-train bench-parse bench-rcd

bench-train: $(STAMP)
	RBREPRO_MIRROR=$(MIRROR) $(BIN)/python bench/train_ijcnn1.py

bench-rcd: $(STAMP)
	RBREPRO_MIRROR=$(MIRROR) $(BIN)/python bench/rcd_speedup.py

bench-parse: $(STAMP)
	$(BIN)/python bench/parse_throughput.py 1000000

clean-results:
	rm -rf results/quick figures/quick-fig3.*
