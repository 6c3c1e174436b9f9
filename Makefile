# TOChain top-level Makefile.
#
# Non-recursive: every folder that builds something has a `module.mk`
# included below; it adds its libraries, programs and tests to the lists
# this file declares, using the templates defined here.  Each folder also
# lists the Debian packages it needs in `deps.txt` (one name per line),
# which `make deps` installs.
#
#   make            build everything into build/
#   make check      build and run every test (SAN=1: ASan+UBSan build in build/san)
#   make demo       the end-to-end demonstration
#   make bench      benchmarks; tables on stdout, plots in build/bench/
#   make fuzz       the libFuzzer targets, bounded in time (FUZZ_SECONDS)
#   make deps       install the Debian packages (idempotent)

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build/san
else
BUILD ?= build
endif
TOP := $(CURDIR)

CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif

OPT ?= -O2
CPPFLAGS += -D_GNU_SOURCE -Iinclude
CFLAGS += -std=gnu11 $(OPT) -g -fPIC -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers \
	-fno-strict-aliasing -MMD -MP
LDFLAGS +=
LDLIBS += -lpthread
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt)

# Lists the module.mk files append to.
LIBS :=
PROGRAMS :=
UNIT_TESTS :=
TEST_PROGS :=
BENCH_PROGS :=
FUZZ_TARGETS :=

objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

# $(call program,NAME,PREREQUISITES,EXTRA_LDLIBS): build/bin/NAME
define program
PROGRAMS += $(BUILD)/bin/$(1)
$(BUILD)/bin/$(1): $(2)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o %.a,$$^) $(3) $$(LDLIBS)
endef

# $(call unit_test,NAME,PREREQUISITES,EXTRA_LDLIBS): Check test from tests/unit/NAME.c
define unit_test
UNIT_TESTS += $(BUILD)/tests/unit/$(1)
$(BUILD)/obj/tests/unit/$(1).o: CPPFLAGS += $(CHECK_CFLAGS) -Itests/lib
$(BUILD)/tests/unit/$(1): $(BUILD)/obj/tests/unit/$(1).o $(2)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o %.a,$$^) $(3) $$(CHECK_LIBS) $$(LDLIBS)
endef

# $(call test_prog,NAME,PREREQUISITES,EXTRA_LDLIBS): helper program that
# integration tests run (build/tests/bin/NAME)
define test_prog
TEST_PROGS += $(BUILD)/tests/bin/$(1)
$(BUILD)/tests/bin/$(1): $(2)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o %.a,$$^) $(3) $$(LDLIBS)
endef

# $(call bench_prog,NAME,PREREQUISITES,EXTRA_LDLIBS): build/bench/bin/NAME
define bench_prog
BENCH_PROGS += $(BUILD)/bench/bin/$(1)
$(BUILD)/bench/bin/$(1): $(2)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o %.a,$$^) $(3) $$(LDLIBS)
endef

.PHONY: all check demo soak bench fuzz deps clean unit integration
all:

# In dependency order: a module.mk may use the variables of those before it.
MODULES := lib/region lib/sockrpc lib/ctl lib/cgroup lib/util \
	host-sched/lib host-sched/sim host-sched/daemon \
	host-toe/chain vnfs/http vnfs/fw vnfs/ids vnfs/waf vnfs/runtime \
	host-toe/toe host-toe/vmlink host-toe/region-tool \
	tochaind sfc-ctl guest-lib guest-drivers qemu-patches \
	tests/guest tests/qemu bench eval dist
include $(addsuffix /module.mk,$(MODULES))

all: $(LIBS) $(PROGRAMS) $(UNIT_TESTS) $(TEST_PROGS) $(BENCH_PROGS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Static archives: $(BUILD)/lib/libNAME.a from the objects listed as prerequisites.
$(BUILD)/lib/%.a:
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# Tests: T=PATTERN selects tests whose name contains PATTERN.
check: deps
	$(MAKE) all $(FUZZ_TARGETS)
	scripts/run-tests.sh $(BUILD) $(T)

# Without the deps step, for a quick edit-test loop.
unit: all
	scripts/run-tests.sh --unit-only $(BUILD) $(T)

# VM=qemu: the web server runs in a real QEMU guest (scripts/demo-vm.sh).
demo: deps
	$(MAKE) all
	$(if $(filter qemu,$(VM)),scripts/demo-vm.sh,scripts/demo.sh) $(BUILD)

bench: deps
	$(MAKE) all
	scripts/bench.sh $(BUILD)

# The fault soak, not part of check: SOAK_SECONDS (600) of load and faults.
soak: deps
	$(MAKE) all
	scripts/soak.sh $(BUILD)

FUZZ_SECONDS ?= 60
fuzz: deps
	$(MAKE) $(FUZZ_TARGETS)
	scripts/fuzz.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

deps:
	scripts/deps.sh

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
