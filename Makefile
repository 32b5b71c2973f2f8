# One task runner: the README and .ci/run call these targets.
PYTHON ?= .venv/bin/python

.PHONY: setup serve test soak load lint bench docs sqldiff console

setup:
	bash scripts/setup.sh

serve:
	.venv/bin/kyma serve

# The suite runs under eatmydata (when installed; scripts/setup.sh installs it): fsync becomes a
# no-op for every process it starts -- Postgres, kyma, the Kafka broker, Spark. The kill -9 tests
# stay as strong (a killed process's writes are in the page cache, which survives it); only a
# power cut would tell, and no loopback test can make one. It halves the suite's wall time.
EATMYDATA := $(shell command -v eatmydata 2>/dev/null)

test:
	$(EATMYDATA) $(PYTHON) -m pytest

soak:
	HYPOTHESIS_PROFILE=soak $(PYTHON) -m pytest tests/engine/test_pruning_property.py \
		tests/connectors/test_pushdown_property.py tests/fuzz

# The loopback load test for a full minute (the normal suite runs it for 20 s).
load:
	KYMA_LOAD_TEST_SECONDS=60 $(PYTHON) -m pytest tests/ops/test_load_mixed.py

# Every sqllogictest file on kyma and on a loopback Postgres (CI runs a sample: tests/sqldiff).
sqldiff:
	$(PYTHON) tests/sqldiff/run.py

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(PYTHON) scripts/typecheck.py

# The web console's bundle, rebuilt from console/ into kyma/console/static (committed, with
# the hash of its sources that tests/console/test_bundle.py checks).
console:
	cd console && npm ci --no-audit --no-fund && npm run build

# The documentation site, into ./site (open site/index.html).
docs:
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict

bench:
	$(PYTHON) bench/format.py
	$(PYTHON) bench/format.py --dynamic-heavy --rows 300000
	$(PYTHON) bench/row_groups.py
	$(PYTHON) bench/text_needle.py
	$(PYTHON) bench/ingest.py
	$(PYTHON) bench/ingest_inprocess.py
	$(PYTHON) bench/extent_write.py
	$(PYTHON) bench/query.py
	$(PYTHON) bench/clickbench.py
	$(PYTHON) bench/explorer.py
	$(PYTHON) bench/fixed_cost.py
	$(PYTHON) bench/guards.py
	$(PYTHON) bench/dss.py
	$(PYTHON) bench/dynamic.py
	$(PYTHON) bench/federation.py
	$(PYTHON) bench/federation_dss.py
	$(PYTHON) bench/cdc.py
	$(PYTHON) bench/flight.py
	$(PYTHON) bench/pgwire.py
	$(PYTHON) bench/kafka.py
	$(PYTHON) bench/kafka_floor.py
	$(PYTHON) bench/write_shapes.py
	$(PYTHON) bench/otlp.py
	$(PYTHON) bench/otlp_decode.py
	$(PYTHON) bench/otlp_extent.py
	$(PYTHON) bench/filedrop.py
	$(PYTHON) bench/spark_load.py
	$(PYTHON) bench/spark_read.py
	$(PYTHON) bench/catalog.py
	$(PYTHON) bench/catalog_commits.py
	$(PYTHON) bench/console.py
