# Autoapp: `make run` serves on 127.0.0.1:8080 with its data under ./data;
# `make test` runs every test, installing what the browser tests need first.

# Every go command uses the same tags, or go-sqlite3 is rebuilt each time.
SHELL := /bin/bash

export GOFLAGS := -tags=sqlite_fts5 -buildvcs=false
export CGO_ENABLED := 1

VERSION    ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN        := bin/autoapp
ROOT       ?= ./data
ADDR       ?= 127.0.0.1:8080
PW_VERSION := 1.52.0
PW_DRIVER  := $(CURDIR)/.pw-driver
AXE_VERSION := 4.14.1
AXE_DIR     := $(CURDIR)/.axe
CHROMIUM   ?= /usr/bin/chromium

export PLAYWRIGHT_DRIVER_PATH := $(PW_DRIVER)
export AUTOAPP_CHROMIUM := $(CHROMIUM)
export AUTOAPP_AXE := $(AXE_DIR)/package/axe.min.js

.PHONY: run build generate test unit e2e check sandbox browser driver axe clean

## run: generate, build and serve on $(ADDR) with the data under $(ROOT)
run: sandbox build
	./$(BIN) serve --root $(ROOT) --addr $(ADDR)

build: generate
	go build -ldflags "-X autoapp/cmd/autoapp/launcher.Version=$(VERSION)" -o $(BIN) ./cmd/autoapp

generate:
	go tool templ generate -log-level error

## test: checks, unit and handler tests, then the browser tests
test: sandbox check unit e2e

# check fails when gofmt, go mod tidy, go vet, staticcheck or templ generate
# would change anything.
check:
	@echo "==> Checking that the generated templ files are current"
	@tmp=$$(mktemp -d) && cp -r views $$tmp/ && \
	  go tool templ generate -log-level error -path $$tmp && \
	  if ! diff -r views $$tmp/views >/dev/null; then \
	    diff -r views $$tmp/views | head -20; rm -rf $$tmp; \
	    echo "The committed *_templ.go files are out of date: run 'go tool templ generate' and commit them."; exit 1; \
	  fi; rm -rf $$tmp
	@echo "==> gofmt"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@echo "==> go mod tidy (go.mod and go.sum name exactly what the code imports; needs at most the module proxy)"
	@if ! out=$$(go mod tidy -diff 2>&1); then \
	  echo "$$out" | head -40; \
	  echo "go.mod or go.sum is not what 'go mod tidy' would write: run it and commit them."; exit 1; \
	fi
	@echo "==> go vet"
	go vet ./...
	@echo "==> staticcheck (staticcheck.conf: every default check but ST1005, the sentences our errors are)"
	go tool staticcheck ./...

unit:
	@echo "==> Unit and handler tests"
	go test -count=1 -timeout 20m $$(go list ./... | grep -v /e2e)

e2e: browser driver axe
	@echo "==> Browser tests (Chromium at $(CHROMIUM), Playwright driver $(PW_VERSION) in $(PW_DRIVER))"
	go test -count=1 -timeout 30m -v ./e2e/

# The sandbox's namespaces: Debian's bubblewrap, installed once. The server
# refuses to run the engineer's code without it (unless the owner turns on
# Run unconfined), and the tests need it.
sandbox:
	@if ! command -v bwrap >/dev/null; then \
	  echo "==> bubblewrap is missing: installing Debian's bubblewrap package (once)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq bubblewrap >/dev/null && \
	  echo "    installed $$(bwrap --version)"; \
	fi

# The browser: Debian's Chromium, installed once.
browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  echo "==> Chromium is missing: installing Debian's chromium package (once, about a minute)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null && \
	  echo "    installed $$($(CHROMIUM) --version)"; \
	fi

# The Playwright driver playwright-go expects: playwright-core from npm plus node.
driver:
	@if [ ! -f "$(PW_DRIVER)/package/cli.js" ] || ! grep -q '"version": "$(PW_VERSION)"' "$(PW_DRIVER)/package/package.json"; then \
	  echo "==> The Playwright driver is missing: fetching playwright-core@$(PW_VERSION) from npm into $(PW_DRIVER)"; \
	  rm -rf "$(PW_DRIVER)" && mkdir -p "$(PW_DRIVER)" && cd "$(PW_DRIVER)" && \
	  npm pack --silent playwright-core@$(PW_VERSION) >/dev/null && \
	  tar -xzf playwright-core-$(PW_VERSION).tgz && rm playwright-core-$(PW_VERSION).tgz; \
	fi
	@ln -sf "$$(command -v node)" "$(PW_DRIVER)/node"

# axe-core, which the browser tests run on every page: from npm, once.
axe:
	@if [ ! -f "$(AXE_DIR)/package/axe.min.js" ] || ! grep -q '"version": "$(AXE_VERSION)"' "$(AXE_DIR)/package/package.json"; then \
	  echo "==> axe-core is missing: fetching axe-core@$(AXE_VERSION) from npm into $(AXE_DIR)"; \
	  rm -rf "$(AXE_DIR)" && mkdir -p "$(AXE_DIR)" && cd "$(AXE_DIR)" && \
	  npm pack --silent axe-core@$(AXE_VERSION) >/dev/null && \
	  tar -xzf axe-core-$(AXE_VERSION).tgz && rm axe-core-$(AXE_VERSION).tgz; \
	fi

clean:
	rm -rf bin .pw-driver .axe
