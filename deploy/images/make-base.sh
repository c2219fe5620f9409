#!/usr/bin/env bash
# Makes the local image every Brain image is built FROM (the BASE build argument), without an
# image registry: a minimal Debian root made with debootstrap from the Debian archive this machine's
# apt already uses, imported into podman (or docker) as brain-base:latest.
#
#   sudo deploy/images/make-base.sh            # brain-base:latest, with podman
#   ENGINE=docker sudo deploy/images/make-base.sh
#   deploy/images/make-base.sh --print-mirror  # only say which archive and suite it would use
#
# The suite and mirror come from /etc/apt/sources.list*; SUITE and MIRROR override them. The
# machine's extra CA certificates (/usr/local/share/ca-certificates) are copied in, so package
# installs inside the images trust what this machine trusts.
set -euo pipefail

ENGINE=${ENGINE:-podman}
TAG=${BASE_TAG:-brain-base:latest}

APT_ETC=${APT_ETC:-/etc/apt}

die() { echo "make-base: $*" >&2; exit 1; }

# The first plain Debian archive apt uses: one-line .list entries or deb822 .sources stanzas.
read_mirror() {
    local files=("$APT_ETC/sources.list" "$APT_ETC"/sources.list.d/*.list "$APT_ETC"/sources.list.d/*.sources)
    local f
    for f in "${files[@]}"; do
        [ -f "$f" ] || continue
        case "$f" in
        *.sources)
            awk 'BEGIN{RS=""; FS="\n"}
                 { uri=""; suite="";
                   for (i=1;i<=NF;i++) {
                     if ($i ~ /^URIs:/)   { split($i,a,/[ \t]+/); uri=a[2] }
                     if ($i ~ /^Suites:/) { split($i,a,/[ \t]+/); suite=a[2] } }
                   if (uri ~ /\/debian\/?$/ && suite !~ /-/) { print uri, suite; exit } }' "$f"
            ;;
        *)
            awk '$1=="deb" { i=2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                 if ($i ~ /\/debian\/?$/ && $(i+1) !~ /-/) { print $i, $(i+1); exit } }' "$f"
            ;;
        esac
    done | head -n 1
}

if [ -z "${MIRROR:-}" ] || [ -z "${SUITE:-}" ]; then
    found=$(read_mirror)
    [ -n "$found" ] || die "no Debian archive found in $APT_ETC/sources.list*; set MIRROR and SUITE."
    MIRROR=${MIRROR:-${found% *}}
    SUITE=${SUITE:-${found#* }}
fi
if [ "${1:-}" = --print-mirror ]; then
    echo "$MIRROR $SUITE"
    exit 0
fi
[ "$(id -u)" = 0 ] || die "debootstrap needs root; run as root (sudo)."
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
WORK=${BASE_WORKDIR:-$(mktemp -d /tmp/brain-base.XXXXXX)}
echo "make-base: debootstrap $SUITE from $MIRROR into $WORK/root"

root="$WORK/root"
debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$root" "$MIRROR"

# apt inside the images: the same archive, with its updates and security suites.
security=${SECURITY_MIRROR:-${MIRROR%/debian*}/debian-security}
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $security $SUITE-security main
SOURCES
# Small images: no documentation, no recommended packages, no cached package lists.
cat >"$root/etc/apt/apt.conf.d/90brain" <<'APT'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT
cat >"$root/etc/dpkg/dpkg.cfg.d/90brain-nodoc" <<'DPKG'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
DPKG

if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null
fi

chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/tmp/*

tar -C "$root" -c . | "$ENGINE" import \
    --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$TAG"
rm -rf "$WORK"
echo "make-base: imported $TAG"
