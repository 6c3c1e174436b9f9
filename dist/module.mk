# dist: installing TOChain on a host (dist/README.md).
#
#   make install [PREFIX=/usr/local] [DESTDIR=]   programs, preload library,
#                        samples, man pages, systemd units, /etc/default files
#   make uninstall       removes what install put there (not /etc/default)
#   make deb             Debian packages into $(BUILD)/deb/ (DEB_OUT): tochain, and
#                        tochain-qemu when the patched QEMU is built (DEB_QEMU=1:
#                        `make qemu` first; DEB_QEMU=0: never)
#
# install uses what `make` built in $(BUILD); DIST_NOBUILD=1 installs it as
# it is, never rebuilding (the install test does, whatever the build's flags).
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
# tochaind and the programs it starts itself: it finds tochain-toe,
# tochain-vnf, tochain-fw-apply and tochain-vmlink next to its own binary
# (its symbolic link in $(SBINDIR) resolved), so no option is needed.
PKGLIBDIR ?= $(LIBDIR)/tochain
DATADIR ?= $(PREFIX)/share/tochain
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
# Debian's packages put units in /lib/systemd/system; /usr/local/lib/systemd/system
# is in systemd's search path too.
ifeq ($(PREFIX),/usr)
UNITDIR ?= /lib/systemd/system
else
UNITDIR ?= $(PREFIX)/lib/systemd/system
endif

TOCHAIN_VERSION := 0.1.0
DIST_USER_BIN := sfc-ctl tochain-run tochain-sim tochain-region
DIST_SBIN := tochain-sched tochain-ivshmem-server
DIST_PKGLIB := tochaind tochain-toe tochain-vnf tochain-fw-apply tochain-vmlink
# symbolic links $(SBINDIR)/NAME -> $(PKGLIBDIR)/NAME
DIST_SBIN_LINKS := tochaind tochain-vnf
DIST_MAN := $(wildcard dist/man/*.[158])
DIST_RULES_FW := $(wildcard vnfs/fw/rules/*.rules)
DIST_RULES_IDS := vnfs/ids/rules/local.rules vnfs/ids/rules/vars.conf
DIST_RULES_WAF := vnfs/waf/conf/waf.conf.example
DIST_TOPOS := $(wildcard dist/examples/*.topo)
DIST_BUILT := $(addprefix $(BUILD)/bin/,$(DIST_USER_BIN) $(DIST_SBIN) $(DIST_PKGLIB)) $(GL_SO)

.PHONY: install install-files uninstall deb
ifeq ($(DIST_NOBUILD),1)
install: install-files
else
install: $(DIST_BUILT)
	$(MAKE) --no-print-directory install-files DIST_NOBUILD=1
endif

# @SBINDIR@, @BINDIR@ in the unit templates
dist_subst = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g'

# tochain-run preloads <its dir>/../lib/libtochain-preload.so; an
# operator's /etc/default files are kept.
install-files:
	@for f in $(DIST_BUILT); do [ -f $$f ] || { echo "install: $$f missing: run make first" >&2; exit 1; }; done
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PKGLIBDIR) \
		$(DESTDIR)$(DATADIR)/examples $(DESTDIR)$(DATADIR)/rules/fw \
		$(DESTDIR)$(DATADIR)/rules/ids $(DESTDIR)$(DATADIR)/rules/waf \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/default
	install -m 0755 $(addprefix $(BUILD)/bin/,$(DIST_USER_BIN)) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(addprefix $(BUILD)/bin/,$(DIST_SBIN)) $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(addprefix $(BUILD)/bin/,$(DIST_PKGLIB)) $(DESTDIR)$(PKGLIBDIR)/
	for p in $(DIST_SBIN_LINKS); do \
		ln -sfn $$(realpath -m --relative-to=$(SBINDIR) $(PKGLIBDIR))/$$p $(DESTDIR)$(SBINDIR)/$$p; done
	install -m 0644 $(GL_SO) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(DIST_RULES_FW) $(DESTDIR)$(DATADIR)/rules/fw/
	install -m 0644 $(DIST_RULES_IDS) $(DESTDIR)$(DATADIR)/rules/ids/
	install -m 0644 $(DIST_RULES_WAF) $(DESTDIR)$(DATADIR)/rules/waf/
	install -m 0644 $(DIST_TOPOS) $(DESTDIR)$(DATADIR)/examples/
	for m in $(DIST_MAN); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/; done
	for u in tochaind tochain-sched; do \
		$(dist_subst) dist/systemd/$$u.service.in > $(DESTDIR)$(UNITDIR)/$$u.service && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.service; done
	for d in tochaind tochain-sched; do \
		if [ -e $(DESTDIR)$(SYSCONFDIR)/default/$$d ]; then echo "install: kept $(DESTDIR)$(SYSCONFDIR)/default/$$d"; \
		else install -m 0644 dist/default/$$d $(DESTDIR)$(SYSCONFDIR)/default/; fi; done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(DIST_USER_BIN)) \
		$(addprefix $(DESTDIR)$(SBINDIR)/,$(DIST_SBIN) $(DIST_SBIN_LINKS)) \
		$(addprefix $(DESTDIR)$(PKGLIBDIR)/,$(DIST_PKGLIB)) \
		$(DESTDIR)$(LIBDIR)/libtochain-preload.so \
		$(addprefix $(DESTDIR)$(UNITDIR)/,tochaind.service tochain-sched.service)
	for m in $(notdir $(DIST_MAN)); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; done
	rm -rf $(DESTDIR)$(DATADIR)
	-rmdir $(DESTDIR)$(PKGLIBDIR)

# Packages: staged with install-files (PREFIX=/usr), assembled with dpkg-deb.
DEB_OUT ?= $(BUILD)/deb
deb: $(if $(filter 1,$(DEB_QEMU)),qemu) $(if $(filter 1,$(DIST_NOBUILD)),,$(DIST_BUILT))
	rm -rf $(DEB_OUT)/tochain
	$(MAKE) --no-print-directory install-files DIST_NOBUILD=1 PREFIX=/usr DESTDIR=$(abspath $(DEB_OUT))/tochain
	DEB_QEMU=$(DEB_QEMU) dist/deb/build-deb.sh $(DEB_OUT) $(TOCHAIN_VERSION)
