# Developer tasks of the pyop repository. `make help` lists them.
PYTHON ?= python3

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-10s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: testdata
testdata: ## Regenerate the golden trees testdata/project/, testdata/at/, testdata/cronjob/ (commit them with template changes).
	$(PYTHON) -m pyscaffold_op.dev.regen

.PHONY: models
models: ## Regenerate pyscaffold_op/models/ from the pinned Kubernetes schemas (kubernetes-validate).
	$(PYTHON) -m pyscaffold_op.dev.models

# The real Kubernetes tools pyop is judged by, pinned in hack/oracles/versions.env and built from the Go
# module proxy into LOCALBIN (like kubebuilder's Makefile): kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd, kwok, controller-gen, kubebuilder, helm, olm-validate; and Go's own envtest suites
# (controller-runtime's, kubebuilder's CronJob tutorial: hack/oracles/gosuites.sh, run by tests/gosuites/).
# A stamp per tool skips the tools whose inputs did not change; Go's caches make rebuilds cheap.
LOCALBIN ?= $(CURDIR)/bin
.PHONY: oracles
oracles: ## Build the pinned oracle tools (kube-apiserver, controller-manager, scheduler, etcd, kwok, ...) and Go's envtest suites into bin/.
	bash hack/oracles/build.sh $(LOCALBIN)
	bash hack/oracles/gosuites.sh $(LOCALBIN)

.PHONY: test
test: ## Run the whole test suite.
	$(PYTHON) -m pytest

RUNS ?= 10
.PHONY: stress-test
stress-test: ## Run the whole suite RUNS times (default 10) with a second process burning a core; stop at the first failure.
	@$(PYTHON) -c "while True: pass" & burner=$$!; \
	trap 'kill $$burner 2>/dev/null' EXIT INT TERM; \
	for run in $$(seq 1 $(RUNS)); do \
		echo "== stress run $$run of $(RUNS) (a core burner is running: pid $$burner)"; \
		if ! $(PYTHON) -m pytest -q -p no:randomly; then \
			echo "== stress-test FAILED on run $$run of $(RUNS)"; exit 1; \
		fi; \
	done; \
	echo "== stress-test passed: $(RUNS) runs under load"

.PHONY: lint
lint: ## Lint and check formatting with ruff.
	$(PYTHON) -m ruff check pyscaffold_op tests benchmarks examples
	$(PYTHON) -m ruff format --check pyscaffold_op tests benchmarks examples

.PHONY: bench
BENCHES ?= bench_scaffold bench_generate bench_envtest bench_crd_install bench_runtime bench_install
bench: ## Run every benchmark (scaffolder, generator, emulator, runtime, install closures); print every miss, fail at the end.
	@failed=""; \
	for b in $(BENCHES); do \
		echo "== $$b"; \
		$(PYTHON) benchmarks/$$b.py || failed="$$failed $$b"; \
	done; \
	if [ -n "$$failed" ]; then echo "== goals missed by:$$failed"; exit 1; fi; \
	echo "== every benchmark met its goals"

.PHONY: bench-cost-curve
bench-cost-curve: ## pyop and controller-runtime informers at 1k-100k objects, kube-apiserver (needs `make oracles`) then the emulator.
	$(PYTHON) benchmarks/bench_cost_curve.py --servers real,emulator --sizes 1000,10000,50000,100000

.PHONY: bench-go
bench-go: ## pyop and Go's controller-runtime (benchmarks/goperator), on kube-apiserver (needs `make oracles`) then the emulator, 3 alternating runs.
	$(PYTHON) benchmarks/bench_vs_go.py --servers real,emulator --sizes 1000 --runs 3

.PHONY: bench-kopf
bench-kopf: ## pyop and kopf side by side on one emulator (needs `pip install -e '.[bench]'`).
	$(PYTHON) benchmarks/bench_vs_kopf.py
