# Building and installing hark.
#   make               builds the release binaries, as scripts/quickstart does
#   make install       installs hark under PREFIX (/usr/local unless told)
#   make uninstall     removes what `make install` put there, and nothing else
# DESTDIR (for packagers) goes before every installed path; the installed hark finds its assets
# in $(PREFIX)/share/hark/assets, beside its bin/. Installed: hark and its helpers hark-ffmpeg,
# hark-tags and hark-cover in bin/ (hark looks for them beside itself), the man page, completions for
# bash, zsh and fish (written by hark itself, through swift-argument-parser), assets/, and the
# documentation in share/doc/hark (README.md, LICENSE and docs/, whose links stay relative).

PREFIX ?= /usr/local
SWIFT ?= swift
# The Swift runtime linked in, so that the installed hark needs no Swift toolchain.
SWIFT_BUILD = $(SWIFT) build -c release --static-swift-stdlib
bin = .build/release

root = $(DESTDIR)$(PREFIX)
bindir = $(root)/bin
man1dir = $(root)/share/man/man1
bashdir = $(root)/share/bash-completion/completions
zshdir = $(root)/share/zsh/site-functions
fishdir = $(root)/share/fish/vendor_completions.d
sharedir = $(root)/share/hark
assetsdir = $(sharedir)/assets
docdir = $(root)/share/doc/hark
docs = README.md LICENSE docs/MANNERS.md docs/TOUR.md docs/PROTOCOL.md docs/HACKING.md \
  docs/PERFORMANCE.md
programs = hark hark-ffmpeg hark-tags hark-cover
completions = '$(bashdir)/hark' '$(zshdir)/_hark' '$(fishdir)/hark.fish'
# What is in assets/, a line each ("music/01 Morning Light.flac": the names have spaces); the
# folders deepest first.
asset_files = cd assets && find . -type f -printf '%P\n'
asset_dirs = cd assets && find . -mindepth 1 -depth -type d -printf '%P\n'

.PHONY: all build install uninstall

all: build

# hark's code laid out by BOLT where llvm-bolt is installed (scripts/bolt: the player's memory,
# docs/PERFORMANCE.md); where it is not, or fails, hark is left as linked and the reason printed.
build:
	$(SWIFT_BUILD)
	-scripts/bolt $(bin)/hark

# Builds first; SwiftPM rebuilds nothing when the release build is current.
install: build
	install -d '$(bindir)' '$(man1dir)' '$(bashdir)' '$(zshdir)' '$(fishdir)'
	install -m 755 $(programs:%=$(bin)/%) '$(bindir)'
	install -m 644 man/hark.1 '$(man1dir)'
	$(bin)/hark --generate-completion-script bash >'$(bashdir)/hark'
	$(bin)/hark --generate-completion-script zsh >'$(zshdir)/_hark'
	$(bin)/hark --generate-completion-script fish >'$(fishdir)/hark.fish'
	chmod 644 $(completions)
	$(asset_files) | while IFS= read -r f; do \
	  install -D -m 644 "$$f" '$(assetsdir)'/"$$f" || exit 1; done
	for f in $(docs); do install -D -m 644 "$$f" '$(docdir)'/"$$f" || exit 1; done

# The folders under share/hark go once empty; those shared with other programs (bin/, man1/,
# the completion folders) stay.
uninstall:
	rm -f $(programs:%='$(bindir)/%') '$(man1dir)/hark.1' $(completions)
	$(asset_files) | while IFS= read -r f; do rm -f '$(assetsdir)'/"$$f"; done
	$(asset_dirs) | while IFS= read -r d; do \
	  rmdir --ignore-fail-on-non-empty '$(assetsdir)'/"$$d" 2>/dev/null || true; done
	rmdir --ignore-fail-on-non-empty '$(assetsdir)' '$(sharedir)' 2>/dev/null || true
	rm -f $(docs:%='$(docdir)/%')
	rmdir --ignore-fail-on-non-empty '$(docdir)/docs' '$(docdir)' 2>/dev/null || true
