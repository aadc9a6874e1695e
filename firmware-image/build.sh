#!/usr/bin/env bash
# Build the flashable appliance image: firmware-image/out/<target>/hausbox-<version>-<target>.img
# (+ .img.zst, SHA256SUMS, build-info.json). Run as root (`make image`, TARGET=amd64|arm64).
#
#   1. wheels: hausbox from the committed tree (git archive HEAD: what the image holds is a commit,
#      not whatever is being edited) and its dependencies, built on this host;
#   2. the root file system with mmdebstrap (Debian bookworm minbase + systemd, kernel, python3),
#      buildroot-overlay/ synced in, the release installed into /opt/hausbox/releases/<version>;
#   3. the partitions made without mounting anything (mkdosfs + mcopy, mke2fs -d), assembled into an
#      MBR disk image by genimage.
set -euo pipefail
TARGET=${TARGET:-amd64}
PYTHON=${PYTHON:-python3}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY=${SECURITY:-http://deb.debian.org/debian-security}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=$HERE/out/$TARGET
WORK=$HERE/out/work-$TARGET
started=$(date +%s)

"$HERE/tools.sh" "$TARGET"
case "$TARGET" in
  amd64) components=main
         packages=linux-image-cloud-amd64,systemd-boot-efi
         boot_type=0xEF ;;  # EFI system partition: UEFI mini PCs boot it through systemd-boot
  arm64) components=main,non-free-firmware
         packages=linux-image-arm64,raspi-firmware
         boot_type=0x0C ;;  # FAT32 (LBA): what the Pi's boot ROM reads
esac
packages=$packages,systemd,systemd-sysv,udev,dbus,iproute2,python3,python3-venv,initramfs-tools,zstd
packages=$packages,systemd-resolved,systemd-timesyncd,e2fsprogs,fdisk,cloud-guest-utils,ca-certificates

if [ "$TARGET" = arm64 ] && ! arch-test arm64 >/dev/null 2>&1; then
  # arm64 programs (dpkg's maintainer scripts, update-initramfs) run here through qemu-user.
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  /lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-aarch64.conf 2>/dev/null || update-binfmts --enable qemu-aarch64 || true
  arch-test arm64 >/dev/null || { echo "error: this machine cannot run arm64 programs (binfmt_misc + qemu-user-static)" >&2; exit 1; }
fi

rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"

# ---- 1. wheels -------------------------------------------------------------------------------
git -C "$ROOT" archive --format=tar --prefix=src/ HEAD | tar -x -C "$WORK"
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$WORK/src/hausbox/__init__.py")
[ -n "$version" ] || { echo "error: no __version__ in hausbox/__init__.py" >&2; exit 1; }
echo "== hausbox $version ($(git -C "$ROOT" rev-parse --short HEAD)) for $TARGET" >&2
"$PYTHON" -m pip wheel --quiet --disable-pip-version-check -w "$WORK/wheels" "$WORK/src"
if [ "$TARGET" = arm64 ]; then
  # The pure-Python wheels serve any CPU; each binary one is swapped for the same release's wheel
  # for the Pi's CPU and bookworm's Python (3.11).
  for wheel in "$WORK"/wheels/*.whl; do
    case "$wheel" in *-none-any.whl) continue ;; esac
    name_version=$(basename "$wheel" | cut -d- -f1,2 | sed 's/-/==/')
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d "$WORK/wheels" \
      --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 --platform manylinux_2_28_aarch64 \
      --python-version 3.11 --implementation cp "$name_version"
    rm "$wheel"
  done
fi

# A wheel that lacks a data file of the tree (a migration left out of package_data) builds an image
# whose service cannot start: refuse it here, naming the files.
"$PYTHON" - "$WORK/src" "$WORK"/wheels/hausbox-*.whl <<'CHECK'
import pathlib, sys, zipfile
source, wheel = pathlib.Path(sys.argv[1]), sys.argv[2]
shipped = set(zipfile.ZipFile(wheel).namelist())
missing = [str(p.relative_to(source)) for p in sorted(source.glob("hausbox/**/migrations/*.sql")) if str(p.relative_to(source)) not in shipped]
if missing:
    sys.exit(f"error: the hausbox wheel lacks {', '.join(missing)} (setup.cfg package_data): the image would not start")
CHECK

# ---- 2. root file system ---------------------------------------------------------------------
# The overlay without its README; the initrd's module list for this target.
cp -a "$ROOT/buildroot-overlay" "$WORK/overlay" && rm -f "$WORK/overlay/README.md"
mkdir -p "$WORK/overlay/usr/share/initramfs-tools/modules.d"
grep -v '^#' "$HERE/modules-$TARGET" > "$WORK/overlay/usr/share/initramfs-tools/modules.d/hausbox"
mmdebstrap --arch="$TARGET" --variant=minbase --components="$components" --include="$packages" \
  --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d" "$1/boot/firmware"' \
  --essential-hook="copy-in $WORK/overlay/etc/initramfs-tools/conf.d/hausbox /etc/initramfs-tools/conf.d/" \
  --essential-hook="copy-in $WORK/overlay/usr/share/initramfs-tools/modules.d/hausbox /usr/share/initramfs-tools/modules.d/" \
  --customize-hook="sync-in $WORK/overlay /" \
  --customize-hook="copy-in $WORK/wheels /tmp" \
  --customize-hook="$HERE/customize.sh \"\$1\" $version $TARGET $WORK/boot" \
  bookworm "$WORK/rootfs" \
  "deb $MIRROR bookworm ${components//,/ }" "deb $MIRROR bookworm-updates ${components//,/ }" "deb $SECURITY bookworm-security ${components//,/ }"

# ---- 3. partitions and disk ------------------------------------------------------------------
# Root: the system plus room for two more release slots (an update installs beside the current one).
root_mb=$(( $(du -sm "$WORK/rootfs" | cut -f1) + 400 ))
boot_mb=$([ "$TARGET" = arm64 ] && echo 256 || echo 128)
data_mb=256  # grown to fill the card at first boot
mkdir -p "$WORK/images"
mkdosfs -n HAUSBOOT -F 32 -C "$WORK/images/boot.vfat" $(( boot_mb * 1024 )) >/dev/null
mcopy -s -i "$WORK/images/boot.vfat" "$WORK/boot"/* ::/
mke2fs -q -t ext4 -L hausbox-root -d "$WORK/rootfs" "$WORK/images/root.ext4" "${root_mb}M"
mkdir -p "$WORK/empty"
mke2fs -q -t ext4 -L hausbox-data -d "$WORK/empty" "$WORK/images/data.ext4" "${data_mb}M"
image=hausbox-$version-$TARGET.img
cat > "$WORK/genimage.cfg" <<CFG
image $image {
  hdimage { partition-table-type = "mbr" align = 1M }
  partition boot { partition-type = $boot_type bootable = true image = "boot.vfat" }
  partition root { partition-type = 0x83 image = "root.ext4" }
  partition data { partition-type = 0x83 image = "data.ext4" }
}
CFG
rm -f "$OUT"/hausbox-*
genimage --config "$WORK/genimage.cfg" --inputpath "$WORK/images" --outputpath "$OUT" \
  --rootpath "$WORK/empty" --tmppath "$WORK/genimage-tmp" >/dev/null
zstd -q -T0 -3 -f "$OUT/$image" -o "$OUT/$image.zst"
(cd "$OUT" && sha256sum "$image" "$image.zst" > SHA256SUMS)

rm -rf "$WORK"
seconds=$(( $(date +%s) - started ))
image_bytes=$(stat -c %s "$OUT/$image")
allocated_bytes=$(( $(stat -c %b "$OUT/$image") * $(stat -c %B "$OUT/$image") ))
zst_bytes=$(stat -c %s "$OUT/$image.zst")
cat > "$OUT/build-info.json" <<JSON
{"version": "$version", "target": "$TARGET", "commit": "$(git -C "$ROOT" rev-parse HEAD)", "image": "$image",
 "imageBytes": $image_bytes, "allocatedBytes": $allocated_bytes, "compressedBytes": $zst_bytes, "buildSeconds": $seconds}
JSON
echo "== $OUT/$image: $((image_bytes >> 20)) MiB ($((allocated_bytes >> 20)) MiB allocated), $((zst_bytes >> 20)) MiB compressed, built in ${seconds} s" >&2
