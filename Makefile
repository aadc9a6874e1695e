# The README's two commands: `make run` and `make test`. Both install what they need on a fresh
# Debian machine (run as root), so nothing has to be set up by hand first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 3000
HAUSBOX_DATA_DIR ?= ./data
PYTEST_ARGS ?=

.PHONY: install run test test-update test-deps bench clean image qemu-smoke qemu-arm64

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || $(MAKE) --no-print-directory apt-python
	@echo "installing into $(VENV)" >&2
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip >&2
	@$(BIN)/pip install --quiet -e '.[test]' >&2
	@touch $(STAMP)

.PHONY: apt-python
apt-python:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-dev

run: install
	PORT=$(PORT) HAUSBOX_DATA_DIR=$(HAUSBOX_DATA_DIR) $(BIN)/python -m hausbox serve

# Debian packages the tests start for real: mosquitto (MQTT broker), influxdb (1.x, the history export's server),
# chromium and its driver (the web console's browser tests, driven by selenium).
test-deps:
	@command -v mosquitto >/dev/null 2>&1 || test -x /usr/sbin/mosquitto || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto)
	@command -v influxd >/dev/null 2>&1 || test -x /usr/bin/influxd || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq influxdb)
	@(command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1) || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

test: install test-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The update helper with real releases (wheels built from this tree, venvs installed, restarts): slow, apart.
test-update: install
	HAUSBOX_TEST_UPDATE=1 $(BIN)/python -m pytest tests/updater $(PYTEST_ARGS)

# The appliance image (firmware-image/README.md): TARGET=amd64 (QEMU, mini PCs) or arm64 (Raspberry Pi 4/5).
# Built from the committed tree (HEAD), as root; installs the Debian tools it needs.
TARGET ?= amd64

image: install
	PYTHON=$(abspath $(BIN)/python) TARGET=$(TARGET) firmware-image/build.sh

# Boots the amd64 image in QEMU (TCG) and runs the smoke scenarios of tests/image; the image is
# (re)built first when it is missing or was built from another commit than HEAD.
qemu-smoke: install
	@firmware-image/tools.sh smoke
	@grep -qs "\"commit\": \"$$(git rev-parse HEAD)\"" firmware-image/out/amd64/build-info.json || \
		$(MAKE) --no-print-directory image TARGET=amd64
	HAUSBOX_IMAGE_TESTS=1 $(BIN)/python -m pytest tests/image $(PYTEST_ARGS)

# The arm64 (Raspberry Pi) image booted under qemu-system-aarch64 -M virt until its API answers.
qemu-arm64:
	@test -f firmware-image/out/arm64/build-info.json || $(MAKE) --no-print-directory image TARGET=arm64
	firmware-image/qemu-arm64.sh

bench: install test-deps
	@$(BIN)/python tools/bench

clean:
	rm -rf $(VENV) build *.egg-info
